/**
 * A digest string that is malformed or of an unsupported algorithm. Not a DomainError: the registry
 * edge answers it as OCI `DIGEST_INVALID`; anywhere else it is an internal error.
 */
export class InvalidDigestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InvalidDigestError";
  }
}

/**
 * Manifest bytes that are not a manifest the registry stores; `detail` is machine-readable context
 * (the supported media types). Not a DomainError: the registry edge answers it as OCI
 * `MANIFEST_INVALID`; anywhere else it is an internal error.
 */
export class InvalidManifestError extends Error {
  constructor(
    message: string,
    readonly detail?: unknown,
  ) {
    super(message);
    this.name = "InvalidManifestError";
  }
}

/**
 * A manifest that references a blob or child manifest the repo does not hold (`digest`): nothing
 * was written. The registry edge answers it as OCI `MANIFEST_BLOB_UNKNOWN` (a blob) or
 * `MANIFEST_UNKNOWN` (a manifest), both 400, with `{digest}` as detail.
 */
export class MissingReferenceError extends Error {
  constructor(
    message: string,
    readonly kind: "blob" | "manifest",
    readonly digest: string,
  ) {
    super(message);
    this.name = "MissingReferenceError";
  }
}

/**
 * An upload session that cannot go on: `gone` when nothing of it is left (OCI
 * `BLOB_UPLOAD_UNKNOWN`), `broken` when its bytes cannot be trusted or it changed concurrently (OCI
 * `BLOB_UPLOAD_INVALID`). Either way the client starts the upload again.
 */
export class UploadSessionError extends Error {
  constructor(
    message: string,
    readonly state: "gone" | "broken",
  ) {
    super(message);
    this.name = "UploadSessionError";
  }
}

/**
 * A chunk that does not start where the session stands: `received` bytes so far. The registry edge
 * answers OCI `RANGE_INVALID` (416) with the range received.
 */
export class UploadRangeError extends Error {
  constructor(
    message: string,
    readonly received: number,
  ) {
    super(message);
    this.name = "UploadRangeError";
  }
}

/**
 * The metadata names content the blob store no longer has (a deleted file or S3 object) at `key`:
 * the registry lost data. The registry edge answers OCI `BLOB_UNKNOWN` (404) and logs `key` for the
 * operator.
 */
export class ContentMissingError extends Error {
  constructor(
    message: string,
    /** The blob driver key that is missing. */
    readonly key: string,
  ) {
    super(message);
    this.name = "ContentMissingError";
  }
}

/**
 * The blob store holds content for `key` that does not match the metadata: its size is
 * `storedSize`, the record says `expectedSize` (truncated, extended or replaced behind the
 * registry's back). Nothing was sent. The registry edge answers it as a server failure (500 with
 * an OCI error body, ADR 0020) and logs `key` and both sizes for the operator (`wharf fsck` names
 * the images it breaks).
 */
export class ContentDamagedError extends Error {
  constructor(
    message: string,
    /** The blob driver key whose object has the wrong size. */
    readonly key: string,
    readonly expectedSize: number,
    readonly storedSize: number,
  ) {
    super(message);
    this.name = "ContentDamagedError";
  }
}

/**
 * A registry write that would move or delete tag `tag` of `repoName`, which immutability rule
 * `ruleUid` protects (ADR 0045): nothing was written. The registry edge answers it as OCI `DENIED`
 * (403) with this message, which podman and skopeo show.
 */
export class ImmutableTagError extends Error {
  constructor(
    readonly tag: string,
    readonly repoName: string,
    readonly ruleUid: string,
  ) {
    super(`tag ${tag} of ${repoName} is immutable (rule ${ruleUid})`);
    this.name = "ImmutableTagError";
  }
}
