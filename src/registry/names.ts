import { invalidArgument } from "../core/errors.js";

/** Repo names are registry path components: the one rule shared with group names. */
export { validateRepoName } from "../core/registry-name.js";

/** OCI tag names. */
export const TAG_NAME_PATTERN = /^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/;
/** Manifest digests the API accepts (spec: sha256:<hex>). */
export const DIGEST_PATTERN = /^sha256:[a-f0-9]{64}$/;

/** Throws INVALID_ARGUMENT on `name` unless it is a valid OCI tag. */
export function validateTagName(name: string): void {
  if (!TAG_NAME_PATTERN.test(name))
    throw invalidArgument("name", `name must match "${TAG_NAME_PATTERN.source}"`);
}

/** Throws INVALID_ARGUMENT on `digest` unless it is sha256:<64 lowercase hex>. */
export function validateDigest(digest: string, field = "digest"): void {
  if (!DIGEST_PATTERN.test(digest))
    throw invalidArgument(field, `${field} must match "${DIGEST_PATTERN.source}"`);
}
