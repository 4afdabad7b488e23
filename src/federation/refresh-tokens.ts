import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { RefreshTokenRow } from "../storage/refresh-token-store.js";
import type { Store } from "../storage/store.js";

/** Refresh tokens live 30 days from their issue (each rotation starts a new 30 days). */
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/** Every refresh token starts with this, so it is recognizable (e.g. by secret scanners). */
export const REFRESH_TOKEN_PREFIX = "wrt_";

/** What the minted access tokens of a refresh token are bound to. */
export interface RefreshBinding {
  identityUid: string;
  /** Audiences the access tokens may have (a refresh may ask for a subset). */
  audience: readonly string[];
  /** `scope` restriction (group uidps); undefined = none. */
  scopes?: readonly string[];
  /** `cap` restriction (capability short names); undefined = none. */
  caps?: readonly string[];
  /** The `act` claim to carry (the upstream token's iss/sub/aud). */
  act?: Record<string, unknown>;
}

/** A refresh token as handed to a client. */
export interface IssuedRefreshToken {
  /** Opaque: `wrt_` + 43 base64url characters (256 random bits). Only its SHA-256 is stored. */
  token: string;
  /** Milliseconds since the epoch. */
  expireTime: number;
}

/** SHA-256 hex of a refresh token: its key in the store. */
export function refreshTokenHash(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/**
 * Issues a refresh token for `binding` (the login flow calls this after a browser login; the STS
 * when `create_refresh_token` is asked). A new family unless `familyUid` is given (rotation).
 * `notAfter` caps the expiry (e.g. a static-keys identity's expiration). Throws NOT_FOUND when the
 * identity does not exist.
 */
export async function issueRefreshToken(
  store: Pick<Store, "refreshTokens">,
  binding: RefreshBinding,
  opts: { now: number; familyUid?: string; notAfter?: number },
): Promise<IssuedRefreshToken> {
  const token = `${REFRESH_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
  const expireTime = Math.min(opts.now + REFRESH_TOKEN_TTL_MS, opts.notAfter ?? Number.POSITIVE_INFINITY);
  const row: RefreshTokenRow = {
    tokenHash: refreshTokenHash(token),
    familyUid: opts.familyUid ?? randomUUID(),
    identityUid: binding.identityUid,
    audience: [...binding.audience],
    createTime: opts.now,
    expireTime,
  };
  if (binding.scopes !== undefined) row.scopes = [...binding.scopes];
  if (binding.caps !== undefined) row.caps = [...binding.caps];
  if (binding.act !== undefined) row.act = binding.act;
  await store.refreshTokens.insert(row);
  return { token, expireTime };
}

/** Why a refresh token was refused (caller-safe text). */
export class RefreshRefused extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "RefreshRefused";
  }
}

/**
 * Spends `token` and issues its successor in the same family, in one transaction; returns the
 * binding both share and the successor. Refuses (RefreshRefused) an unknown, revoked or expired
 * token, and a token already spent: that also revokes its whole family, the newest token included
 * (a spent token presented again means two parties hold the family). `check` runs before anything
 * is written (e.g. that the identity still exists and has not expired); what it throws propagates.
 */
export async function rotateRefreshToken(
  store: Pick<Store, "refreshTokens" | "transaction">,
  token: string,
  opts: { now: number; check?: (row: RefreshTokenRow) => Promise<{ notAfter?: number } | undefined> },
): Promise<{ row: RefreshTokenRow; successor: IssuedRefreshToken }> {
  if (!token.startsWith(REFRESH_TOKEN_PREFIX) || token.length > 200) {
    throw new RefreshRefused("refresh token is not valid");
  }
  const hash = refreshTokenHash(token);
  const row = await store.refreshTokens.get(hash);
  if (!row) throw new RefreshRefused("refresh token is not valid");
  if (row.spentTime !== undefined) {
    await store.refreshTokens.revokeFamily(row.familyUid);
    throw new RefreshRefused("refresh token was already used: every token of its family is now revoked");
  }
  if (row.expireTime <= opts.now) throw new RefreshRefused("refresh token has expired");
  const limits = (await opts.check?.(row)) ?? {};
  const successor = await store.transaction(async (tx) => {
    if (!(await tx.refreshTokens.spend(hash, opts.now))) return undefined;
    const binding: RefreshBinding = { identityUid: row.identityUid, audience: row.audience };
    if (row.scopes !== undefined) binding.scopes = row.scopes;
    if (row.caps !== undefined) binding.caps = row.caps;
    if (row.act !== undefined) binding.act = row.act;
    return issueRefreshToken(tx, binding, { now: opts.now, familyUid: row.familyUid, ...limits });
  });
  if (!successor) {
    // Lost a race with another use of the same token: a replay as well.
    await store.refreshTokens.revokeFamily(row.familyUid);
    throw new RefreshRefused("refresh token was already used: every token of its family is now revoked");
  }
  return { row, successor };
}
