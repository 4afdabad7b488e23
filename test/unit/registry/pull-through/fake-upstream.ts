import { Readable } from "node:stream";
import { sha256Digest } from "../../../../src/registry/digest.js";
import { OCI_INDEX, OCI_MANIFEST } from "../../../../src/registry/manifest-parser.js";
import {
  type RemoteDescriptor,
  RemoteError,
  type RemoteErrorKind,
  type RemoteManifest,
  type RemoteRegistry,
} from "../../../../src/registry/remote/remote-registry.js";

/**
 * A stand-in for the RemoteRegistry contract (only inside tests): one upstream's repos in memory,
 * counting every call, with switches for failures. Its blob bodies behave as the contract says:
 * wrong bytes end in a `digest-mismatch` RemoteError instead of `end`.
 */
export interface FakeUpstream extends RemoteRegistry {
  calls: string[];
  /** Every call fails with this kind (e.g. "unreachable") while set. */
  failing: RemoteErrorKind | undefined;
  retryAfterMs: number;
  /** Blob digests whose bodies are corrupted (one byte flipped: the body then fails at its end). */
  corrupt: Set<string>;
  /** Holds blob bodies until `release()` (to line up concurrent misses). */
  hold: boolean;
  release(): void;
  closed: boolean;
  manifests: Map<string, RemoteManifest>;
  tagsOf: Map<string, string>;
  blobsOf: Map<string, Buffer>;
  referrersOf: Map<string, RemoteDescriptor[]>;
  /** Stores blob `content`, returning its descriptor. */
  addBlob(content: string | Buffer, mediaType?: string): { mediaType: string; digest: string; size: number };
  /** Stores an image (config + layers) under `repo:tag`; its digest. */
  addImage(repo: string, tag: string | undefined, layers: string[], extra?: Record<string, unknown>): string;
  /** Stores an index of `children` under `repo:tag`; its digest. */
  addIndex(repo: string, tag: string, children: string[]): string;
  /** Points `repo:tag` at `digest`. */
  tag(repo: string, tag: string, digest: string): void;
}

export function createFakeUpstream(url = "https://upstream.test"): FakeUpstream {
  const manifests = new Map<string, RemoteManifest>();
  const tagsOf = new Map<string, string>();
  const blobsOf = new Map<string, Buffer>();
  const referrersOf = new Map<string, RemoteDescriptor[]>();
  let waiting: (() => void)[] = [];
  const gate = () => (fake.hold ? new Promise<void>((r) => waiting.push(r)) : Promise.resolve());
  const check = (call: string) => {
    fake.calls.push(call);
    if (fake.failing) {
      throw new RemoteError(
        fake.failing,
        `${url}: ${fake.failing}`,
        fake.failing === "rate-limited" ? 429 : undefined,
        fake.failing === "rate-limited" ? fake.retryAfterMs : undefined,
      );
    }
  };
  const notFound = (what: string) => new RemoteError("not-found", `${url}: ${what} not found`, 404);
  const put = (content: string, mediaType: string) => {
    const digest = sha256Digest(Buffer.from(content));
    manifests.set(digest, { digest, mediaType, content: Buffer.from(content) });
    return digest;
  };

  const fake: FakeUpstream = {
    url,
    calls: [],
    failing: undefined,
    retryAfterMs: 30_000,
    corrupt: new Set(),
    hold: false,
    closed: false,
    manifests,
    tagsOf,
    blobsOf,
    referrersOf,
    release() {
      fake.hold = false;
      const w = waiting;
      waiting = [];
      for (const r of w) r();
    },
    addBlob(content, mediaType = "application/vnd.oci.image.layer.v1.tar") {
      const bytes = Buffer.from(content);
      const digest = sha256Digest(bytes);
      blobsOf.set(digest, bytes);
      return { mediaType, digest, size: bytes.length };
    },
    addImage(repo, tag, layers, extra = {}) {
      const config = fake.addBlob(`config ${layers.join("+")}`, "application/vnd.oci.image.config.v1+json");
      const doc = {
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        config,
        layers: layers.map((l) => fake.addBlob(l)),
        ...extra,
      };
      const digest = put(JSON.stringify(doc), OCI_MANIFEST);
      if (tag !== undefined) fake.tag(repo, tag, digest);
      return digest;
    },
    addIndex(repo, tag, children) {
      const doc = {
        schemaVersion: 2,
        mediaType: OCI_INDEX,
        manifests: children.map((digest, i) => ({
          mediaType: OCI_MANIFEST,
          digest,
          size: manifests.get(digest)?.content.byteLength ?? 0,
          platform: { os: "linux", architecture: i === 0 ? "amd64" : "arm64" },
        })),
      };
      const digest = put(JSON.stringify(doc), OCI_INDEX);
      fake.tag(repo, tag, digest);
      return digest;
    },
    tag(repo, tag, digest) {
      tagsOf.set(`${repo}:${tag}`, digest);
    },

    async getManifest(repo, reference) {
      check(`GET manifest ${repo}:${reference}`);
      const digest = reference.includes(":") ? reference : tagsOf.get(`${repo}:${reference}`);
      const m = digest && manifests.get(digest);
      if (!m) throw notFound(`manifest ${reference}`);
      return m;
    },
    async headManifest(repo, reference) {
      check(`HEAD manifest ${repo}:${reference}`);
      const digest = reference.includes(":") ? reference : tagsOf.get(`${repo}:${reference}`);
      const m = digest && manifests.get(digest);
      return m ? { digest: m.digest, mediaType: m.mediaType, size: m.content.byteLength } : undefined;
    },
    async getBlob(repo, digest) {
      check(`GET blob ${repo}@${digest}`);
      const bytes = blobsOf.get(digest);
      if (!bytes) throw notFound(`blob ${digest}`);
      await gate();
      const sent = Buffer.from(bytes);
      const corrupt = fake.corrupt.has(digest);
      if (corrupt) sent[0] = (sent[0] ?? 0) ^ 0xff;
      const half = Math.ceil(sent.length / 2);
      const body = new Readable({ read() {} });
      // Two chunks, then the end (or, for corrupt bytes, the contract's digest-mismatch error).
      setImmediate(() => {
        body.push(sent.subarray(0, half));
        setImmediate(() => {
          body.push(sent.subarray(half));
          setImmediate(() => {
            if (corrupt) body.destroy(new RemoteError("digest-mismatch", `${url}: blob ${digest} mismatch`));
            else body.push(null);
          });
        });
      });
      return { size: bytes.length, body };
    },
    async hasBlob(_repo, digest) {
      check(`HEAD blob ${digest}`);
      return blobsOf.has(digest);
    },
    async mountBlob() {
      return false;
    },
    async pushBlob() {
      throw new Error("not used");
    },
    async putManifest() {
      throw new Error("not used");
    },
    tags: () => {
      throw new Error("not used");
    },
    catalog: () => {
      throw new Error("not used");
    },
    async referrers(repo, digest) {
      check(`referrers ${repo}@${digest}`);
      return referrersOf.get(digest) ?? [];
    },
    async close() {
      fake.closed = true;
    },
  };
  return fake;
}
