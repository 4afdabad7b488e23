/**
 * What signing in and tokens keep: the issuer's signing keys, withdrawn tokens, and the browser
 * login flow's short-lived state. Refresh tokens have their own file (refresh-token-store.ts).
 * Conventions are those of store.ts (times in ms, undefined for missing).
 */

/** An ES256 signing key of Wharf's issuer; private material never leaves the store and issuer. */
export interface SigningKeyRow {
  kid: string;
  privateJwk: string;
  publicJwk: string;
  createTime: number;
  /** Keys past this are kept only for verification, never used to sign. */
  retireTime?: number;
}

export interface SigningKeyStore {
  /** Every key, oldest first (createTime, then kid). */
  list(): Promise<SigningKeyRow[]>;
  /** Inserts `row` unless a key with the same kid exists. */
  insert(row: SigningKeyRow): Promise<void>;
  /**
   * Sets `retireTime` on every key that has none and is older than `kid` created at `createTime`
   * (an earlier createTime, or the same one and a smaller kid): what a rotation to `kid` does to
   * the keys it replaces, so of two racing rotations the newer key stays unmarked. Returns how many
   * keys it marked.
   */
  retireOthers(kid: string, createTime: number, retireTime: number): Promise<number>;
}

/**
 * A withdrawal of issuer tokens: every token of `subject` (every subject when undefined) whose
 * `iat` is before `issuedBefore`. Times are milliseconds since the Unix epoch.
 */
export interface TokenRevocationRow {
  /** Assigned by the store; grows with every insert. */
  id: number;
  subject?: string;
  issuedBefore: number;
  createTime: number;
  /** When no token the row could match is accepted any more; the row may be pruned then. */
  expireTime: number;
}

/** Token revocations, shared by every server process (each keeps the live ones in memory). */
export interface TokenRevocationStore {
  /** Stores a revocation; returns it with its id. */
  insert(row: Omit<TokenRevocationRow, "id">): Promise<TokenRevocationRow>;
  /** Every revocation with expireTime > `now`, by id. */
  listLive(now: number): Promise<TokenRevocationRow[]>;
  /**
   * A cheap fingerprint of the table (row count and highest id): it changes whenever a row is
   * added or pruned, so pollers re-read the rows only then.
   */
  version(): Promise<string>;
  /** Deletes the revocations with expireTime <= `now`; returns how many. */
  prune(now: number): Promise<number>;
}

/** One piece of the browser login flow's short-lived state. */
export interface LoginSessionRow {
  /** A hash of the secret that names the row (the flow's `state`, a one-time code), never the secret. */
  id: string;
  /** What the row is (e.g. "authorization", "code"); `take` must name the same kind. */
  kind: string;
  /** JSON text. */
  data: string;
  expireTime: number;
}

/** Short-lived login state; every row is taken at most once. */
export interface LoginSessionStore {
  /** Stores a row; ALREADY_EXISTS when the id is taken. */
  put(row: LoginSessionRow): Promise<void>;
  /**
   * Deletes the row `id` of `kind` and returns its data, unless it is missing or expired at `now`
   * (an expired row is deleted too). Of concurrent takers at most one gets the data.
   */
  take(id: string, kind: string, now: number): Promise<string | undefined>;
  /** Deletes every row expired at `now`; returns how many. */
  purgeExpired(now: number): Promise<number>;
}
