/**
 * An in-memory remote registry for the copier's unit tests: it keeps repos (manifests, tags,
 * linked blobs) the way a registry does (a manifest PUT needs its blobs and children; referrers
 * come from `subject`), logs every call, and fails calls a test chooses.
 */
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import { parseManifest } from "../../../../src/registry/manifest-parser.js";
import {
  type RemoteBlob,
  type RemoteDescriptor,
  RemoteError,
  type RemoteManifest,
  type RemoteManifestHead,
  type RemoteRegistry,
} from "../../../../src/registry/remote/remote-registry.js";
import type { BuiltManifest } from "../../../support/replication-images.js";

interface FakeRepo {
  manifests: Map<string, { mediaType: string; content: Buffer; subject?: string; artifactType?: string }>;
  tags: Map<string, string>;
  blobs: Set<string>;
}

/** The operations calls are logged under. */
export type FakeOp =
  | "getManifest"
  | "headManifest"
  | "getBlob"
  | "hasBlob"
  | "mountBlob"
  | "pushBlob"
  | "putManifest"
  | "tags"
  | "catalog"
  | "referrers";

const sha256 = (b: Uint8Array) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

/** An in-memory RemoteRegistry (see the module comment). */
export class FakeRemote implements RemoteRegistry {
  readonly url: string;
  readonly repos = new Map<string, FakeRepo>();
  readonly blobBytes = new Map<string, Buffer>();
  /** Every call: `<op> <repo> <reference>`. */
  readonly calls: string[] = [];
  /** Decides whether a call fails (return the error) before it does anything. */
  failWith: ((op: FakeOp, repo: string, reference: string) => RemoteError | undefined) | undefined;
  /** Whether cross-repo mounts are offered. */
  mounts = true;
  /** Whether the referrers API is offered (else referrers come from the `sha256-<hex>` fallback tag). */
  referrersApi = true;
  /** Whether the catalog is offered. */
  catalogOffered = true;
  closed = 0;

  constructor(url = "https://remote.test") {
    this.url = url;
  }

  private enter(op: FakeOp, repo: string, reference = ""): void {
    this.calls.push(`${op} ${repo} ${reference}`.trim());
    const err = this.failWith?.(op, repo, reference);
    if (err) throw err;
  }

  private repo(name: string, create = false): FakeRepo | undefined {
    let repo = this.repos.get(name);
    if (!repo && create) {
      repo = { manifests: new Map(), tags: new Map(), blobs: new Set() };
      this.repos.set(name, repo);
    }
    return repo;
  }

  private notFound(what: string): RemoteError {
    return new RemoteError("not-found", `${this.url}: ${what} not found`, 404);
  }

  /** Calls of `op` logged so far. */
  count(op: FakeOp): number {
    return this.calls.filter((c) => c.startsWith(`${op} `) || c === op).length;
  }

  async getManifest(repo: string, reference: string): Promise<RemoteManifest> {
    this.enter("getManifest", repo, reference);
    const r = this.repo(repo);
    const digest = reference.startsWith("sha256:") ? reference : r?.tags.get(reference);
    const m = digest === undefined ? undefined : r?.manifests.get(digest);
    if (!m || digest === undefined) throw this.notFound(`${repo}:${reference}`);
    return { digest, mediaType: m.mediaType, content: m.content };
  }

  async headManifest(repo: string, reference: string): Promise<RemoteManifestHead | undefined> {
    this.enter("headManifest", repo, reference);
    const r = this.repo(repo);
    const digest = reference.startsWith("sha256:") ? reference : r?.tags.get(reference);
    const m = digest === undefined ? undefined : r?.manifests.get(digest);
    return m && digest ? { digest, mediaType: m.mediaType, size: m.content.length } : undefined;
  }

  async getBlob(repo: string, digest: string): Promise<RemoteBlob> {
    this.enter("getBlob", repo, digest);
    const bytes = this.repo(repo)?.blobs.has(digest) ? this.blobBytes.get(digest) : undefined;
    if (!bytes) throw this.notFound(`blob ${digest}`);
    return { size: bytes.length, body: Readable.from([bytes]) };
  }

  async hasBlob(repo: string, digest: string): Promise<boolean> {
    this.enter("hasBlob", repo, digest);
    return this.repo(repo)?.blobs.has(digest) ?? false;
  }

  async mountBlob(repo: string, digest: string, fromRepo: string): Promise<boolean> {
    this.enter("mountBlob", repo, `${digest} from ${fromRepo}`);
    if (!this.mounts || !this.repo(fromRepo)?.blobs.has(digest)) return false;
    this.repo(repo, true)?.blobs.add(digest);
    return true;
  }

  async pushBlob(repo: string, digest: string, size: number, body: Readable): Promise<void> {
    this.enter("pushBlob", repo, digest);
    const bytes = await buffer(body);
    if (bytes.length !== size || sha256(bytes) !== digest) {
      throw new RemoteError("refused", `${this.url}: blob upload invalid (DIGEST_INVALID)`, 400);
    }
    this.blobBytes.set(digest, bytes);
    this.repo(repo, true)?.blobs.add(digest);
  }

  async putManifest(
    repo: string,
    reference: string,
    mediaType: string,
    content: Uint8Array,
  ): Promise<string> {
    this.enter("putManifest", repo, reference);
    const parsed = parseManifest(content, mediaType);
    const r = this.repo(repo, true) as FakeRepo;
    for (const ref of parsed.references) {
      const there = ref.kind === "manifest" ? r.manifests.has(ref.digest) : r.blobs.has(ref.digest);
      if (!there) throw new RemoteError("refused", `${this.url}: ${ref.kind} ${ref.digest} unknown`, 400);
    }
    const digest = sha256(content);
    r.manifests.set(digest, {
      mediaType,
      content: Buffer.from(content),
      ...(parsed.subject ? { subject: parsed.subject.digest } : {}),
      ...(parsed.artifactType ? { artifactType: parsed.artifactType } : {}),
    });
    if (!reference.startsWith("sha256:")) r.tags.set(reference, digest);
    return digest;
  }

  async *tags(repo: string): AsyncIterable<string> {
    this.enter("tags", repo);
    const r = this.repo(repo);
    if (!r) throw this.notFound(`repository ${repo}`);
    yield* [...r.tags.keys()].sort();
  }

  async *catalog(): AsyncIterable<string> {
    this.enter("catalog", "");
    if (!this.catalogOffered) throw new RemoteError("denied", `${this.url}: catalog access denied`, 403);
    yield* [...this.repos.keys()].sort();
  }

  async referrers(repo: string, digest: string): Promise<RemoteDescriptor[]> {
    this.enter("referrers", repo, digest);
    const r = this.repo(repo);
    if (!r) return [];
    if (!this.referrersApi) {
      const fallback = r.tags.get(digest.replace(":", "-"));
      const index = fallback === undefined ? undefined : r.manifests.get(fallback);
      return index
        ? (JSON.parse(index.content.toString()) as { manifests: RemoteDescriptor[] }).manifests
        : [];
    }
    return [...r.manifests.entries()]
      .filter(([, m]) => m.subject === digest)
      .map(([d, m]) => ({
        digest: d,
        mediaType: m.mediaType,
        size: m.content.length,
        ...(m.artifactType ? { artifactType: m.artifactType } : {}),
      }));
  }

  async close(): Promise<void> {
    this.closed++;
  }

  /** Stores `manifest` (with its blobs and children) in `repo` under `reference`, without logging. */
  seed(repo: string, reference: string, m: BuiltManifest): void {
    const r = this.repo(repo, true) as FakeRepo;
    for (const [d, b] of m.blobs) {
      this.blobBytes.set(d, b);
      r.blobs.add(d);
    }
    for (const c of m.children) r.manifests.set(c.digest, { mediaType: c.mediaType, content: c.manifest });
    const parsed = parseManifest(m.manifest, m.mediaType);
    r.manifests.set(m.digest, {
      mediaType: m.mediaType,
      content: m.manifest,
      ...(parsed.subject ? { subject: parsed.subject.digest } : {}),
    });
    if (!reference.startsWith("sha256:")) r.tags.set(reference, m.digest);
  }
}
