import { createHash } from "node:crypto";
import { type Digest, parseDigest } from "../digest.js";
import { DOCKER_MANIFEST, DOCKER_MANIFEST_LIST, OCI_INDEX, OCI_MANIFEST } from "../manifest-parser.js";
import { type RemoteDescriptor, RemoteError, type RemoteManifest } from "./remote-registry.js";

/** The manifest kinds asked for (Accept), OCI first. */
export const MANIFEST_ACCEPT = [OCI_INDEX, OCI_MANIFEST, DOCKER_MANIFEST_LIST, DOCKER_MANIFEST].join(", ");
const INDEXES = new Set([OCI_INDEX, DOCKER_MANIFEST_LIST]);
/** Content types that say nothing of the kind: the body's `mediaType` decides. */
const GENERIC = new Set(["", "application/json", "application/octet-stream", "text/plain"]);

/** The media type of a Content-Type header without parameters, lowercased; "" when absent. */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/** Whether a media type says nothing about the manifest kind. */
export function isGenericType(mediaType: string): boolean {
  return GENERIC.has(mediaType);
}

/** Whether `mediaType` is an index (OCI index or Docker manifest list). */
export function isIndexType(mediaType: string): boolean {
  return INDEXES.has(mediaType);
}

/** `<algorithm>:<hex>` of `bytes`. */
export function digestOfBytes(bytes: Uint8Array, algorithm: Digest["algorithm"]): string {
  return `${algorithm}:${createHash(algorithm).update(bytes).digest("hex")}`;
}

/**
 * Checks fetched manifest bytes and says what they are: a digest reference must be their digest;
 * for a tag, a `Docker-Content-Digest` (when sent) must be (`digest-mismatch` else). The media
 * type is the Content-Type's; only when that says nothing (`application/json`, none) is the body
 * parsed, for its `mediaType` (else `manifests` → index). Bytes that cannot be a JSON object are
 * `invalid-response`.
 */
export function verifiedManifest(
  bytes: Buffer,
  contentType: string | undefined,
  reference: { digest?: Digest },
  headerDigest: string | undefined,
  what: string,
): RemoteManifest {
  let expected = reference.digest;
  if (!expected && headerDigest !== undefined) {
    try {
      expected = parseDigest(headerDigest.trim());
    } catch {
      throw new RemoteError(
        "invalid-response",
        `${what}: Docker-Content-Digest "${headerDigest.slice(0, 80)}" is not a digest`,
      );
    }
  }
  const digest = digestOfBytes(bytes, expected?.algorithm ?? "sha256");
  if (expected && digest !== expected.value) {
    throw new RemoteError(
      "digest-mismatch",
      `${what}: the manifest hashes to ${digest}, not ${expected.value}`,
    );
  }
  let mediaType = mediaTypeOf(contentType);
  if (!isGenericType(mediaType)) {
    // The Content-Type says what it is: parsing it is the consumer's job; only bytes that cannot
    // be a JSON object are refused here.
    if (firstByte(bytes) !== 0x7b)
      throw new RemoteError("invalid-response", `${what}: the manifest is not a JSON object`);
  } else {
    let body: unknown;
    try {
      body = JSON.parse(bytes.toString("utf8"));
    } catch {
      throw new RemoteError("invalid-response", `${what}: the manifest is not JSON`);
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw new RemoteError("invalid-response", `${what}: the manifest is not a JSON object`);
    }
    const declared = (body as { mediaType?: unknown }).mediaType;
    if (typeof declared === "string" && declared !== "") mediaType = declared;
    else mediaType = Array.isArray((body as { manifests?: unknown }).manifests) ? OCI_INDEX : OCI_MANIFEST;
  }
  return { digest, mediaType, content: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
}

/** The descriptors of an index's `manifests` (a referrers answer); `invalid-response` when malformed. */
export function indexDescriptors(bytes: Uint8Array, what: string): RemoteDescriptor[] {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
  } catch {
    throw new RemoteError("invalid-response", `${what}: the referrers list is not JSON`);
  }
  const manifests = (body as { manifests?: unknown } | null)?.manifests ?? [];
  if (!Array.isArray(manifests))
    throw new RemoteError("invalid-response", `${what}: manifests is not a list`);
  return manifests.map((entry, i) => descriptorOf(entry, `${what}: manifests[${i}]`));
}

function descriptorOf(entry: unknown, where: string): RemoteDescriptor {
  const d = entry as Partial<Record<keyof RemoteDescriptor, unknown>> | null;
  if (typeof d !== "object" || d === null)
    throw new RemoteError("invalid-response", `${where} is not an object`);
  if (typeof d.mediaType !== "string" || d.mediaType === "") {
    throw new RemoteError("invalid-response", `${where}.mediaType is missing`);
  }
  if (typeof d.digest !== "string") throw new RemoteError("invalid-response", `${where}.digest is missing`);
  try {
    parseDigest(d.digest);
  } catch {
    throw new RemoteError("invalid-response", `${where}.digest is not a digest`);
  }
  if (typeof d.size !== "number" || !Number.isSafeInteger(d.size) || d.size < 0) {
    throw new RemoteError("invalid-response", `${where}.size is not a size`);
  }
  const out: RemoteDescriptor = { mediaType: d.mediaType, digest: d.digest, size: d.size };
  if (typeof d.artifactType === "string") out.artifactType = d.artifactType;
  if (typeof d.annotations === "object" && d.annotations !== null && !Array.isArray(d.annotations)) {
    const annotations = Object.entries(d.annotations).filter(
      (e): e is [string, string] => typeof e[1] === "string",
    );
    out.annotations = Object.fromEntries(annotations);
  }
  return out;
}

/** The first byte that is not JSON whitespace; undefined when there is none. */
function firstByte(bytes: Uint8Array): number | undefined {
  for (const byte of bytes) if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) return byte;
  return undefined;
}
