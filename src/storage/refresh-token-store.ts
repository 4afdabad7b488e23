/**
 * Refresh tokens of the STS (`/sts/exchange?create_refresh_token=true`, the login flow). The token
 * itself is opaque and never stored: a row is keyed by the SHA-256 of the token. Tokens rotate:
 * each use spends the presented row and inserts its successor in the same family; presenting a
 * spent token again revokes the whole family (it was stolen, or replayed by a thief).
 */

/** One refresh token as stored. Times are milliseconds since the Unix epoch. */
export interface RefreshTokenRow {
  /** Lowercase hex SHA-256 of the token string. */
  tokenHash: string;
  /** Every token rotated from the same first one shares this id. */
  familyUid: string;
  /** The identity the minted tokens are for (`sub`); its deletion deletes its refresh tokens. */
  identityUid: string;
  /** Audiences of the access tokens minted from it (a refresh may ask for a subset). */
  audience: string[];
  /** `scope` restriction (group uidps) of the minted tokens; undefined = not restricted. */
  scopes?: string[];
  /** `cap` restriction (capability short names); undefined = not restricted. */
  caps?: string[];
  /** The `act` claim carried into every minted token (the upstream token's iss/sub/aud). */
  act?: Record<string, unknown>;
  createTime: number;
  expireTime: number;
  /** Set once the token was exchanged; a spent token is never accepted again. */
  spentTime?: number;
}

export interface RefreshTokenStore {
  /** Inserts `row`; NOT_FOUND when its identity does not exist, ALREADY_EXISTS for a duplicate hash. */
  insert(row: RefreshTokenRow): Promise<void>;
  /** The row of `tokenHash`, spent or not; undefined when unknown (never issued, revoked, purged). */
  get(tokenHash: string): Promise<RefreshTokenRow | undefined>;
  /**
   * Marks the token spent at `now` unless it already is. True only for the one caller that spent
   * it (concurrent callers race on one conditional UPDATE), false when it was spent or is unknown.
   */
  spend(tokenHash: string, now: number): Promise<boolean>;
  /** Deletes every token of the family; returns how many. */
  revokeFamily(familyUid: string): Promise<number>;
  /** Deletes tokens whose expireTime is at or before `now`; returns how many. */
  deleteExpired(now: number): Promise<number>;
  /**
   * Sets the identity's lastSeenTime to `now` unless it was set less than `minIntervalMs` before
   * (one conditional UPDATE, so frequent exchanges do not write each time). True when it wrote.
   */
  markIdentitySeen(identityUid: string, now: number, minIntervalMs: number): Promise<boolean>;
}
