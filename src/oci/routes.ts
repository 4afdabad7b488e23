import { REPOSITORY_PATH } from "../core/registry-name.js";

/** Which registry endpoint a request path names. */
export type RegistryRoute =
  | { kind: "base" }
  | { kind: "token" }
  | { kind: "blob"; name: string; digest: string }
  | { kind: "uploads"; name: string }
  | { kind: "upload"; name: string; id: string }
  | { kind: "manifest"; name: string; reference: string }
  | { kind: "tags"; name: string }
  | { kind: "referrers"; name: string; digest: string }
  | { kind: "history"; name: string; tag: string };

/**
 * An OCI repository name: slash-separated components (distribution spec, at most 255 characters);
 * the component rule is the one group and repo names follow.
 */
export const REPOSITORY_NAME = REPOSITORY_PATH;

/** A tag (distribution spec). */
export const TAG = /^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/;

// The name is matched lazily and the endpoint anchored at the end, so backtracking finds the split
// even when a repository component is itself called "blobs" or "manifests".
const ENDPOINT =
  /^\/v2\/(.+?)\/(?:(blobs\/uploads)\/?([^/]*)|(blobs|manifests|referrers)\/([^/]+)|(tags\/list)|(_service\/history)\/([^/]+))$/;

/**
 * Maps a request path (without the query string) to its route, or undefined when no endpoint has
 * that shape. The name is returned as written; callers validate it with `REPOSITORY_NAME`. The last
 * segment (reference, digest, upload id, tag) is percent-decoded, see {@link decodeSegment}.
 */
export function matchRoute(path: string): RegistryRoute | undefined {
  if (path === "/v2/" || path === "/v2") return { kind: "base" };
  if (path === "/token") return { kind: "token" };
  const m = ENDPOINT.exec(path);
  if (!m) return undefined;
  const name = m[1] as string;
  if (m[2] !== undefined) {
    return m[3] ? { kind: "upload", name, id: decodeSegment(m[3]) } : { kind: "uploads", name };
  }
  const value = m[5] === undefined ? undefined : decodeSegment(m[5]);
  switch (m[4]) {
    case "blobs":
      return { kind: "blob", name, digest: value as string };
    case "manifests":
      return { kind: "manifest", name, reference: value as string };
    case "referrers":
      return { kind: "referrers", name, digest: value as string };
  }
  if (m[6] !== undefined) return { kind: "tags", name };
  return { kind: "history", name, tag: decodeSegment(m[8] as string) };
}

/**
 * The percent-decoded segment, or the segment as written when it is not valid percent-encoding
 * (`t%ff`, `%E0%A4%A`). Such a segment keeps its `%`, which no tag, digest or upload id may
 * contain, so each handler answers it as it answers any value that can name nothing there: a
 * manifest GET/HEAD/DELETE or a tag history 404 MANIFEST_UNKNOWN, a manifest PUT 400
 * MANIFEST_INVALID, a blob GET/HEAD/DELETE 404 BLOB_UNKNOWN, an upload 404 BLOB_UPLOAD_UNKNOWN,
 * referrers 400 DIGEST_INVALID. A bad name (it is never decoded) is 400 NAME_INVALID.
 */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
