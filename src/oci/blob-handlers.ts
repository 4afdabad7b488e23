import { type Digest, parseDigest } from "../registry/digest.js";
import { EMPTY_BLOB_CONTENT, EMPTY_BLOB_DIGEST } from "../registry/manifest-parser.js";
import { sendBlobBytes, sendBlobHead } from "./blob-content.js";
import { OciError, ociError } from "./oci-errors.js";
import { cachedPullOf } from "./pull-through-edge.js";
import { auditFacts, authorize, type Exchange, existingRepo, type RegistryDeps } from "./registry-request.js";

/**
 * The digest of a blob GET, HEAD or DELETE. One that is malformed or of an unsupported algorithm
 * can name no blob: 404 BLOB_UNKNOWN, as a manifest read answers MANIFEST_UNKNOWN for a reference
 * that is no tag or digest (an upload's digest, a write, stays 400 DIGEST_INVALID).
 */
function readDigest(value: string, name: string): Digest {
  try {
    return parseDigest(value);
  } catch {
    throw ociError("BLOB_UNKNOWN", `"${value.slice(0, 80)}" names no blob in ${name}`);
  }
}

/**
 * GET/HEAD `/v2/<name>/blobs/<digest>`: the blob's bytes (Range supported) when the repo links it;
 * in an upstream's namespace, a blob not linked yet is fetched through the pull-through cache first
 * (a plain GET streamed while it is stored, ADR 0052).
 * The metadata is not trusted alone: HEAD stats the object in the blob driver, and GET sends its
 * status only once the driver opened the object, so content lost from storage is 404 BLOB_UNKNOWN
 * (and another storage failure 500) on both, never a 200 cut short.
 */
export async function getBlob(
  deps: RegistryDeps,
  ex: Exchange,
  name: string,
  digestValue: string,
): Promise<void> {
  const digest = readDigest(digestValue, name);
  const { caller, resolved } = await authorize(deps, ex, name, "pull", {
    publicFallback: async (r) => (r.repo ? deps.publicContent.blob(r.repo.uid, digest.value) : false),
  });
  const headers = {
    "content-type": "application/octet-stream",
    "docker-content-digest": digest.value,
    "accept-ranges": "bytes",
    etag: `"${digest.value}"`,
    "cache-control": "max-age=31536000",
  };
  let repoUid = resolved.repo?.uid;
  let blob = repoUid === undefined ? undefined : await deps.content.linkedBlob(repoUid, digest.value);
  if (!blob && digest.value !== EMPTY_BLOB_DIGEST && deps.pullThrough) {
    const cached = await cachedPullOf(deps, ex, name, resolved, caller.principal);
    if (cached) {
      // A plain GET streams the upstream's bytes while they are stored; HEAD and ranges wait for the store.
      const streamed = !ex.head && ex.req.headers.range === undefined;
      const outcome = await deps.pullThrough.blob(
        cached,
        digest,
        streamed
          ? (size) => {
              ex.res.writeHead(200, { ...headers, "content-length": size });
              return ex.res;
            }
          : undefined,
      );
      if (outcome.sent) return;
      repoUid = outcome.repoUid;
      blob = await deps.content.linkedBlob(repoUid, digest.value);
    }
  }
  if (repoUid === undefined) repoUid = existingRepo(resolved).uid;
  if (!blob) {
    if (digest.value !== EMPTY_BLOB_DIGEST)
      throw ociError("BLOB_UNKNOWN", `blob ${digest.value} is not in ${name}`);
    ex.res.writeHead(200, { ...headers, "content-length": EMPTY_BLOB_CONTENT.length });
    ex.res.end(ex.head ? undefined : EMPTY_BLOB_CONTENT);
    return;
  }
  const range = parseRange(ex.req.headers.range, blob.size);
  if (range === "unsatisfiable") {
    throw new OciError("RANGE_INVALID", `range ${ex.req.headers.range} is not satisfiable`, undefined, {
      "content-range": `bytes */${blob.size}`,
    });
  }
  const [status, answer] = range
    ? ([
        206,
        {
          ...headers,
          "content-length": range.end - range.start,
          "content-range": `bytes ${range.start}-${range.end - 1}/${blob.size}`,
        },
      ] as const)
    : ([200, { ...headers, "content-length": blob.size }] as const);
  // The recorded size goes along: storage holding another size is noticed before any header (ADR 0040).
  if (ex.head || blob.size === 0) return sendBlobHead(deps.content, ex, digest, status, answer, blob.size);
  await sendBlobBytes(deps.content, ex, digest, status, answer, range, blob.size);
}

/** DELETE `/v2/<name>/blobs/<digest>`: unlinks the blob from the repo (GC reclaims the bytes), with its `registry.delete` audit record. 202. */
export async function deleteBlob(
  deps: RegistryDeps,
  ex: Exchange,
  name: string,
  digestValue: string,
): Promise<void> {
  const digest = readDigest(digestValue, name);
  const { caller, resolved } = await authorize(deps, ex, name, "delete");
  const repo = existingRepo(resolved);
  const audit = deps.audit;
  const audited =
    audit &&
    ((tx: Parameters<typeof audit.changed>[0]) =>
      audit.changed(tx, "registry.delete", auditFacts(ex, caller.principal), {
        resource: `${name}@${digest.value}`,
        repoUid: repo.uid,
      }));
  if (!(await deps.content.unlinkBlob(repo.uid, digest.value, audited))) {
    throw ociError("BLOB_UNKNOWN", `blob ${digest.value} is not in ${name}`);
  }
  ex.res.writeHead(202, { "content-length": 0, "docker-content-digest": digest.value });
  ex.res.end();
}

/**
 * Parses a single `bytes=` range against `size`: undefined when absent (or not a bytes range, which
 * is ignored as RFC 9110 allows), "unsatisfiable" when it starts past the end, else the clamped
 * half-open interval.
 */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | "unsatisfiable" | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === "" && m[2] === "")) return undefined;
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (suffix === 0) return "unsatisfiable";
    return { start: Math.max(size - suffix, 0), end: size };
  }
  const start = Number(m[1]);
  const last = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || last < start) return "unsatisfiable";
  return { start, end: last + 1 };
}
