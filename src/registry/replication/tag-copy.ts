import { isDigest } from "../digest.js";
import { type Descriptor, parseManifest } from "../manifest-parser.js";
import type { ReplicationProgress } from "./replication-contract.js";
import type { EndpointManifest, ReplicationEndpoint } from "./replication-endpoint.js";

/** How deep referrers of referrers are followed (a signature of an SBOM of an image is depth 2). */
const REFERRER_DEPTH = 3;

/** Blobs of one manifest sent at the same time. */
const BLOB_CONCURRENCY = 3;

/**
 * What one run has learnt about the target, shared by all its tags: which manifests and blobs
 * each target repo holds (so a blob shared by many tags is asked about once), and for each blob a
 * target repo holding it (the source of a cross-repo mount into the next repo that needs it).
 */
export class RunMemory {
  private readonly manifests = new Set<string>();
  private readonly blobs = new Set<string>();
  private readonly holders = new Map<string, string>();

  hasManifest(repo: string, digest: string): boolean {
    return this.manifests.has(`${repo}@${digest}`);
  }
  sawManifest(repo: string, digest: string): void {
    this.manifests.add(`${repo}@${digest}`);
  }
  hasBlob(repo: string, digest: string): boolean {
    return this.blobs.has(`${repo}@${digest}`);
  }
  sawBlob(repo: string, digest: string): void {
    this.blobs.add(`${repo}@${digest}`);
    if (!this.holders.has(digest)) this.holders.set(digest, repo);
  }
  /** A target repo other than `repo` known to hold blob `digest`. */
  holderOf(digest: string, repo: string): string | undefined {
    const holder = this.holders.get(digest);
    return holder === repo ? undefined : holder;
  }
}

/** What one tag copy works with. */
export interface TagCopyContext {
  source: ReplicationEndpoint;
  target: ReplicationEndpoint;
  progress: ReplicationProgress;
  memory: RunMemory;
  signal: AbortSignal;
}

/** A tag copy's outcome: copied (something was written), skipped (all there), gone (no such tag any more). */
export type TagCopyOutcome = "copied" | "skipped" | "gone";

/**
 * Copies tag `tag` of `sourceRepo` to `targetRepo`. When the target's tag already names the same
 * digest and lists every referrer (recursively) as such, nothing is written ("skipped"). Otherwise the
 * manifest tree goes first (an index's children, each manifest's blobs: HEAD, else a cross-repo
 * mount from a repo this run already filled, else streamed), then the tag, then the referrers
 * with their blobs. Throws the first failure; what was written stays (a retry skips it).
 */
export async function copyTag(
  ctx: TagCopyContext,
  sourceRepo: string,
  targetRepo: string,
  tag: string,
): Promise<TagCopyOutcome> {
  const { source, target, signal } = ctx;
  const digest = await source.tagDigest(sourceRepo, tag, signal);
  if (digest === undefined) return "gone";
  const current = await target.tagDigest(targetRepo, tag, signal);
  const referrers = await referrerTree(ctx, sourceRepo, digest);
  if (current === digest) {
    if ((await undiscovered(ctx, targetRepo, referrers)).length === 0) return "skipped";
  } else {
    const manifest = await source.manifest(sourceRepo, digest, signal);
    if (manifest === undefined) return "gone";
    await copyManifest(ctx, sourceRepo, targetRepo, manifest, tag);
  }
  for (const { digest: referrer, subject } of await undiscovered(ctx, targetRepo, referrers)) {
    const manifest = await source.manifest(sourceRepo, referrer, signal);
    if (manifest === undefined) continue;
    await copyManifest(ctx, sourceRepo, targetRepo, manifest, referrer);
    await target.referrerStored?.(targetRepo, subject, manifest, signal);
  }
  return "copied";
}

/** A referrer found under a tag: its digest and the digest it refers to. */
interface FoundReferrer {
  digest: string;
  subject: string;
}

/** Every referrer of `digest` and of theirs (to REFERRER_DEPTH), parents first. */
async function referrerTree(ctx: TagCopyContext, repo: string, digest: string): Promise<FoundReferrer[]> {
  const seen = new Set<string>([digest]);
  const out: FoundReferrer[] = [];
  let level = [digest];
  for (let depth = 0; depth < REFERRER_DEPTH && level.length > 0; depth++) {
    const next: string[] = [];
    for (const subject of level) {
      for (const referrer of await ctx.source.referrers(repo, subject, ctx.signal)) {
        if (seen.has(referrer.digest)) continue;
        seen.add(referrer.digest);
        out.push({ digest: referrer.digest, subject });
        next.push(referrer.digest);
      }
    }
    level = next;
  }
  return out;
}

/**
 * The referrers the target does not list as referrers of their subject (one question per subject):
 * missing ones, and ones stored but not yet discoverable (a run cut off before a fallback tag was
 * updated), so a later run finishes what an interrupted one began.
 */
async function undiscovered(
  ctx: TagCopyContext,
  repo: string,
  referrers: FoundReferrer[],
): Promise<FoundReferrer[]> {
  const listed = new Map<string, Set<string>>();
  const out: FoundReferrer[] = [];
  for (const referrer of referrers) {
    let known = listed.get(referrer.subject);
    if (known === undefined) {
      known = new Set((await ctx.target.referrers(repo, referrer.subject, ctx.signal)).map((d) => d.digest));
      listed.set(referrer.subject, known);
    }
    if (known.has(referrer.digest)) ctx.memory.sawManifest(repo, referrer.digest);
    else out.push(referrer);
  }
  return out;
}

async function hasManifest(ctx: TagCopyContext, repo: string, digest: string): Promise<boolean> {
  if (ctx.memory.hasManifest(repo, digest)) return true;
  const has = await ctx.target.hasManifest(repo, digest, ctx.signal);
  if (has) ctx.memory.sawManifest(repo, digest);
  return has;
}

/**
 * Puts `manifest` into `targetRepo` under `reference` (a tag or its digest) after everything it
 * names: an index's children (recursively), a manifest's blobs. A manifest the target holds
 * already is not sent again, except to point a tag at it.
 */
async function copyManifest(
  ctx: TagCopyContext,
  sourceRepo: string,
  targetRepo: string,
  manifest: EndpointManifest,
  reference: string,
): Promise<void> {
  const present = await hasManifest(ctx, targetRepo, manifest.digest);
  if (!present) {
    const parsed = parseManifest(manifest.content, manifest.mediaType);
    for (const child of parsed.manifests) {
      if (await hasManifest(ctx, targetRepo, child.digest)) continue;
      const bytes = await ctx.source.manifest(sourceRepo, child.digest, ctx.signal);
      if (bytes === undefined)
        throw new Error(`${sourceRepo}@${child.digest} (a child of ${manifest.digest}) is missing`);
      await copyManifest(ctx, sourceRepo, targetRepo, bytes, child.digest);
    }
    const blobs = uniqueBlobs([...(parsed.config ? [parsed.config] : []), ...parsed.layers]);
    await eachLimited(blobs, BLOB_CONCURRENCY, (blob) => copyBlob(ctx, sourceRepo, targetRepo, blob));
  }
  if (present && isDigest(reference)) return;
  await ctx.target.putManifest(targetRepo, reference, manifest, ctx.signal);
  ctx.memory.sawManifest(targetRepo, manifest.digest);
  if (!present) ctx.progress.add({ copiedManifests: 1 });
}

/** The blobs a manifest needs stored: no foreign layers (with `urls`), each digest once. */
function uniqueBlobs(descriptors: Descriptor[]): Descriptor[] {
  const seen = new Set<string>();
  return descriptors.filter((d) => {
    if ((d.urls?.length ?? 0) > 0 || seen.has(d.digest)) return false;
    seen.add(d.digest);
    return true;
  });
}

/**
 * Makes the target repo hold blob `blob`: present already (skippedBlobs), mounted from a target
 * repo this run filled (copiedBlobs, no bytes), else streamed from the source (copiedBlobs,
 * copiedBytes).
 */
async function copyBlob(
  ctx: TagCopyContext,
  sourceRepo: string,
  targetRepo: string,
  blob: Descriptor,
): Promise<void> {
  const { target, memory, signal } = ctx;
  if (memory.hasBlob(targetRepo, blob.digest) || (await target.hasBlob(targetRepo, blob.digest, signal))) {
    memory.sawBlob(targetRepo, blob.digest);
    ctx.progress.add({ skippedBlobs: 1 });
    return;
  }
  const holder = memory.holderOf(blob.digest, targetRepo);
  if (holder !== undefined && (await target.mountBlob(targetRepo, blob.digest, holder, signal))) {
    memory.sawBlob(targetRepo, blob.digest);
    ctx.progress.add({ copiedBlobs: 1 });
    return;
  }
  const body = await ctx.source.openBlob(sourceRepo, blob.digest, blob.size, signal);
  try {
    await target.putBlob(targetRepo, blob.digest, blob.size, body, signal);
  } finally {
    if (!body.destroyed) body.destroy();
  }
  memory.sawBlob(targetRepo, blob.digest);
  ctx.progress.add({ copiedBlobs: 1, copiedBytes: blob.size });
}

/** Runs `work` over `items`, at most `limit` at a time; rejects with the first failure once all settled. */
async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const errors: unknown[] = [];
  const worker = async () => {
    while (next < items.length && errors.length === 0) {
      const item = items[next++] as T;
      try {
        await work(item);
      } catch (err) {
        errors.push(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (errors.length > 0) throw errors[0];
}
