import { hkdfSync } from "node:crypto";
import { errors, jwtVerify, SignJWT } from "jose";
import type { Clock } from "./clock.js";

/**
 * Short-lived capability tokens for links that are fetched without an API token (a large raw
 * vulnerability report's `rawReportUrl`). Each token names one `purpose` and one `subject` (what it
 * opens, e.g. a blob digest) and expires after the TTL it was minted with. Every replica shares the
 * secret it is built from, so a link minted by one replica opens on any other.
 */
export interface SignedLinks {
  /** A token that {@link SignedLinks.open} accepts for `purpose` until `ttlMs` from now. */
  mint(purpose: string, subject: string, ttlMs: number): Promise<string>;
  /** The subject `token` was minted for, or undefined when it is malformed, tampered, for another purpose or expired. */
  open(purpose: string, token: string): Promise<string | undefined>;
}

/** The issuer claim of every link token (not an OIDC token: this server's links only). */
const ISSUER = "wharf:signed-link";

/**
 * Signed links keyed by `secret` (the cluster's page-token secret; an HKDF-derived key keeps the
 * two uses apart), timed by `clock`. Tokens are compact HS256 JWTs (jose): the purpose is the
 * audience, the subject `sub`.
 */
export function createSignedLinks(secret: Uint8Array, clock: Clock): SignedLinks {
  const key = new Uint8Array(hkdfSync("sha256", secret, new Uint8Array(0), "wharf signed links v1", 32));
  const seconds = () => Math.floor(clock.now() / 1000);
  return {
    mint(purpose, subject, ttlMs) {
      return new SignJWT({})
        .setProtectedHeader({ alg: "HS256" })
        .setIssuer(ISSUER)
        .setAudience(purpose)
        .setSubject(subject)
        .setIssuedAt(seconds())
        .setExpirationTime(seconds() + Math.ceil(ttlMs / 1000))
        .sign(key);
    },
    async open(purpose, token) {
      try {
        const { payload } = await jwtVerify(token, key, {
          algorithms: ["HS256"],
          issuer: ISSUER,
          audience: purpose,
          currentDate: new Date(clock.now()),
          clockTolerance: 0,
        });
        return typeof payload.sub === "string" ? payload.sub : undefined;
      } catch (err) {
        if (err instanceof errors.JOSEError) return undefined;
        throw err;
      }
    },
  };
}
