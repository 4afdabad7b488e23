import { type DomainError, permissionDenied, unavailable } from "../core/errors.js";

/**
 * Why an external token (or an upstream issuer's metadata) was refused. `message` is caller-safe:
 * it names the failed check and public values (issuer URLs, algorithms), never key material or the
 * token. `unavailable` marks failures to reach the upstream issuer (worth retrying later).
 */
export class ExternalTokenError extends Error {
  readonly unavailable: boolean;
  constructor(reason: string, opts: { unavailable?: boolean } = {}) {
    super(reason);
    this.name = "ExternalTokenError";
    this.unavailable = opts.unavailable ?? false;
  }
}

/**
 * The API error for a refused external token: UNAVAILABLE when the issuer could not be reached
 * (worth retrying), else PERMISSION_DENIED; both read "<what>: <reason>".
 */
export function externalTokenFailure(err: ExternalTokenError, what: string): DomainError {
  return err.unavailable
    ? unavailable(`${what}: ${err.message}`)
    : permissionDenied(`${what}: ${err.message}`);
}
