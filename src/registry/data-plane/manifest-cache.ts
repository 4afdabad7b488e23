import type { Store } from "../../storage/store.js";

/** What a manifest GET answers with: the stored bytes and their media type. */
export interface CachedManifest {
  digest: string;
  mediaType: string;
  content: Uint8Array;
}

/**
 * A bounded LRU of manifest bodies keyed by (repo uid, digest). A manifest's bytes are fixed by its
 * digest, so an entry never goes stale in content; what can change is whether the repo still holds
 * it. Callers therefore use an entry only where that is known otherwise: after a tag lookup in the
 * same request returned the digest (a tag always names a stored manifest). Writes in this process
 * drop the entry (`forget`), so a re-push with another media type is seen at once.
 */
export class ManifestCache {
  readonly #entries = new Map<string, CachedManifest>();
  #bytes = 0;

  constructor(
    readonly maxEntries = 1000,
    readonly maxBytes = 32 * 1024 * 1024,
  ) {}

  get(repoUid: string, digest: string): CachedManifest | undefined {
    const key = keyOf(repoUid, digest);
    const hit = this.#entries.get(key);
    if (hit === undefined) return undefined;
    // Most recently used last.
    this.#entries.delete(key);
    this.#entries.set(key, hit);
    return hit;
  }

  set(repoUid: string, manifest: CachedManifest): void {
    const size = manifest.content.byteLength;
    if (size > this.maxBytes) return;
    this.forget(repoUid, manifest.digest);
    this.#entries.set(keyOf(repoUid, manifest.digest), manifest);
    this.#bytes += size;
    while (this.#entries.size > this.maxEntries || this.#bytes > this.maxBytes) {
      const [oldest, entry] = this.#entries.entries().next().value as [string, CachedManifest];
      this.#entries.delete(oldest);
      this.#bytes -= entry.content.byteLength;
    }
  }

  forget(repoUid: string, digest: string): void {
    const key = keyOf(repoUid, digest);
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= entry.content.byteLength;
  }

  get size(): number {
    return this.#entries.size;
  }

  get bytes(): number {
    return this.#bytes;
  }
}

const keyOf = (repoUid: string, digest: string) => `${repoUid}\u0000${digest}`;

const caches = new WeakMap<Store, ManifestCache>();

/** The manifest cache of `store` (one per store, so servers sharing a process never mix entries). */
export function manifestCacheOf(store: Store): ManifestCache {
  let cache = caches.get(store);
  if (cache === undefined) {
    cache = new ManifestCache();
    caches.set(store, cache);
  }
  return cache;
}
