import type { UploadSession } from "../registry/data-plane/blob-uploads.js";
import { parseDigest } from "../registry/digest.js";
import { ociError } from "./oci-errors.js";
import { hasRequestBody } from "./read-body.js";
import { authorize, type Exchange, type RegistryDeps, refusePushToUpstream } from "./registry-request.js";
import { REPOSITORY_NAME } from "./routes.js";

/** The request body's declared length, or undefined when it has none (chunked) or a bad one. */
function declaredLength(ex: Exchange): number | undefined {
  const value = ex.req.headers["content-length"];
  if (value === undefined || ex.req.headers["transfer-encoding"] !== undefined) return undefined;
  const length = Number(value);
  return Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

const uploadLocation = (name: string, id: string) => `/v2/${name}/blobs/uploads/${id}`;
const blobLocation = (name: string, digest: string) => `/v2/${name}/blobs/${digest}`;

/** The `Range` header of an upload holding `size` bytes (`0-0` when empty, as distribution sends). */
function uploadRange(size: number): string {
  return `0-${Math.max(size - 1, 0)}`;
}

function sendUploadStatus(ex: Exchange, status: 202 | 204, name: string, upload: UploadSession): void {
  ex.res.writeHead(status, {
    location: uploadLocation(name, upload.id),
    range: uploadRange(upload.size),
    "docker-upload-uuid": upload.id,
    "content-length": 0,
  });
  ex.res.end();
}

function sendBlobCreated(ex: Exchange, name: string, digest: string): void {
  ex.res.writeHead(201, {
    location: blobLocation(name, digest),
    "docker-content-digest": digest,
    "content-length": 0,
  });
  ex.res.end();
}

/**
 * POST `/v2/<name>/blobs/uploads/`: a cross-repository mount (`mount` + `from`, 201 when the blob
 * is there and the caller may pull it, else an ordinary session), a monolithic upload (`digest`
 * with the body, 201), or a new session (202 with Location). Creates the repo (and subgroups) when
 * the path does not exist yet and the caller may.
 */
export async function startUpload(deps: RegistryDeps, ex: Exchange, name: string): Promise<void> {
  const { caller, resolved } = await authorize(deps, ex, name, "push");
  const repo = await deps.resolver.ensureRepo(resolved, caller.principal);
  const identityUid = caller.principal?.identityUid as string;
  const mount = ex.url.searchParams.get("mount");
  const from = ex.url.searchParams.get("from");
  if (mount !== null && from !== null && (await mountBlob(deps, ex, mount, from, repo.uid))) {
    sendBlobCreated(ex, name, mount);
    return;
  }
  const digest = ex.url.searchParams.get("digest");
  if (digest !== null && mount === null) {
    const length = declaredLength(ex);
    const blob = await deps.uploads.putMonolithic(repo.uid, parseDigest(digest), ex.req, length, identityUid);
    sendBlobCreated(ex, name, blob.digest);
    return;
  }
  ex.req.resume();
  const upload = await deps.uploads.start(repo.uid, identityUid);
  sendUploadStatus(ex, 202, name, upload);
}

/** Links `digest` from repo `from` when it is there and the caller may pull `from`; false otherwise. */
async function mountBlob(deps: RegistryDeps, ex: Exchange, digest: string, from: string, repoUid: string) {
  if (!REPOSITORY_NAME.test(from)) return false;
  try {
    parseDigest(digest);
    const source = await authorize(deps, ex, from, "pull");
    if (!source.resolved.repo) return false;
    const sourceUid = source.resolved.repo.uid;
    return await deps.uploads.mount(sourceUid, repoUid, digest);
  } catch {
    // Not allowed, not there, or a bad digest: the spec says fall back to a regular upload.
    return false;
  }
}

/**
 * The session behind `/v2/<name>/blobs/uploads/<id>`, for its starter only. The token may have
 * expired since the session began (long uploads), but it must still name the repository for push,
 * and the starter's current role bindings must still allow the push.
 */
async function sessionOf(deps: RegistryDeps, ex: Exchange, name: string, id: string): Promise<UploadSession> {
  const caller = await deps.auth.authenticate(ex.req.headers, { allowExpired: true });
  const resolved = await deps.resolver.resolve(name);
  // The token may be past its expiry, but it must name the repo, and the bindings count as they are now.
  await deps.gate.require(caller, resolved, "push");
  await refusePushToUpstream(deps, name);
  const upload = await deps.uploads.get(id);
  if (!upload || resolved.repo?.uid !== upload.repoUid) {
    throw ociError("BLOB_UPLOAD_UNKNOWN", `upload ${id.slice(0, 64)} is not in progress for ${name}`);
  }
  if (caller.principal?.identityUid !== upload.identityUid) {
    throw ociError("DENIED", "the upload belongs to another identity");
  }
  return upload;
}

/** PATCH: appends a chunk (Content-Range `<start>-<end>` optional; out of order → 416). 202. */
export async function patchUpload(deps: RegistryDeps, ex: Exchange, name: string, id: string): Promise<void> {
  const upload = await sessionOf(deps, ex, name, id);
  const range = ex.req.headers["content-range"];
  let start: number | undefined;
  if (range !== undefined) {
    const m = /^(?:bytes[ =])?(\d+)-(\d+)$/.exec(range.trim());
    if (!m) throw ociError("BLOB_UPLOAD_INVALID", `Content-Range "${range}" is not <start>-<end>`);
    start = Number(m[1]);
    const length = Number(m[2]) - start + 1;
    const declared = ex.req.headers["content-length"];
    if (length <= 0 || (declared !== undefined && Number(declared) !== length)) {
      throw ociError(
        "BLOB_UPLOAD_INVALID",
        `Content-Range "${range}" does not match Content-Length ${declared}`,
      );
    }
  }
  await deps.uploads.append(upload, ex.req, start, declaredLength(ex));
  sendUploadStatus(ex, 202, name, upload);
}

/** PUT `?digest=`: appends the optional last chunk, verifies, and makes the blob visible. 201. */
export async function finishUpload(
  deps: RegistryDeps,
  ex: Exchange,
  name: string,
  id: string,
): Promise<void> {
  const upload = await sessionOf(deps, ex, name, id);
  const digestParam = ex.url.searchParams.get("digest");
  if (digestParam === null)
    throw ociError("DIGEST_INVALID", "the digest query parameter is required to finish an upload");
  const digest = parseDigest(digestParam);
  const body = hasRequestBody(ex.req) ? ex.req : undefined;
  const blob = await deps.uploads.finish(upload, digest, body, declaredLength(ex));
  sendBlobCreated(ex, name, blob.digest);
}

/** GET: where the upload stands. 204 with Range. */
export async function uploadStatus(
  deps: RegistryDeps,
  ex: Exchange,
  name: string,
  id: string,
): Promise<void> {
  sendUploadStatus(ex, 204, name, await sessionOf(deps, ex, name, id));
}

/** DELETE: cancels the upload. 204. */
export async function cancelUpload(
  deps: RegistryDeps,
  ex: Exchange,
  name: string,
  id: string,
): Promise<void> {
  await deps.uploads.cancel(await sessionOf(deps, ex, name, id));
  ex.res.writeHead(204);
  ex.res.end();
}
