import { deterministicRootUid } from "../core/uidp.js";

/**
 * The root uid a person gets when they register (first login) with a token of `issuer` for
 * `subject`: the sha1 hex of `issuer|subject`. Deterministic, so roles can be bound to someone
 * before they first log in (`Identities.LookupIdentity`), and every server agrees on it.
 */
export function registeredIdentityUid(issuer: string, subject: string): string {
  return deterministicRootUid(`${issuer}|${subject}`);
}
