import { errors } from "jose";

/** Thrown by the key resolver when a token's `kid` names no key of the issuer. */
export class UnknownSigningKey extends Error {
  constructor() {
    super("unknown signing key");
    this.name = "UnknownSigningKey";
  }
}

/**
 * A short, caller-safe description of why a token did not verify (the text after
 * "Unauthenticated: "). It names the failing check and the expected public values (issuer,
 * audience, algorithm) but never key material or the token's contents.
 */
export function describeVerificationError(
  err: unknown,
  expected: { issuerUrl: string; audience: readonly string[] },
): string {
  if (err instanceof UnknownSigningKey) return "token is signed by a key this issuer does not know";
  if (err instanceof errors.JWTExpired) return "token has expired";
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === "iss") return `token issuer is not ${expected.issuerUrl}`;
    if (err.claim === "aud") return `token audience does not include ${expected.audience.join(" or ")}`;
    if (err.claim === "nbf") return "token is not yet valid";
    if (err.reason === "missing") return `token has no "${err.claim}" claim`;
    return `token claim "${err.claim}" is invalid`;
  }
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) {
    return "token signing algorithm is not allowed (only ES256)";
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return "token signature is invalid";
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) return "token is malformed";
  return "token could not be verified";
}
