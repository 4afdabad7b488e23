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
