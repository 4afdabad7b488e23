import { OciError } from "./oci-errors.js";

/**
 * `error` with the token realm of its `WWW-Authenticate` challenge moved to `origin` (the origin
 * a trusted proxy says the client addressed): `realm="<configured realm>"` becomes
 * `realm="<origin>/token"`. Any other error, or a challenge naming another realm, is returned as is.
 */
export function withForwardedRealm(error: OciError, configuredRealm: string, origin: string): OciError {
  const challenge = error.headers["www-authenticate"];
  const configured = `realm="${configuredRealm}"`;
  if (challenge === undefined || !challenge.includes(configured)) return error;
  const headers = {
    ...error.headers,
    "www-authenticate": challenge.replace(configured, `realm="${origin}/token"`),
  };
  const moved = new OciError(error.code, error.message, error.detail, headers, error.status);
  moved.stack = error.stack;
  return moved;
}
