import type { AccessScopes } from "../core/context.js";
import type { ListSlice, ListWindow, UidpFilter } from "../core/list.js";
import type { AdvisoryStore } from "./advisory-store.js";
import type { EolStore, EolTagFilter } from "./eol-store.js";
import type { EventOutboxStore, SubscriptionStore } from "./event-store.js";
import type { LibraryStore } from "./library-store.js";
import type { RefreshTokenStore } from "./refresh-token-store.js";
import type { BlobRecordStore, GarbageStore, ManifestStore, UploadStore } from "./registry-store.js";
import type { VulnReportStore } from "./vuln-report-store.js";

/**
 * The metadata store seam. Domain services see only these interfaces; `src/storage/sql` implements
 * them once with Kysely for SQLite and PostgreSQL, and one conformance suite runs against both.
 *
 * Conventions for every sub-store:
 * - Times are milliseconds since the Unix epoch (numbers).
 * - `get*` returns undefined when the row does not exist; writes to a missing row return false.
 * - Unique-constraint violations surface as ALREADY_EXISTS DomainErrors, never raw driver errors.
 * - `list` honours `ListWindow` exactly: keyset order on (order field, uid), `uid` breaking ties in
 *   the same direction, OFFSET `skip` after the cursor, at most `limit + 1` rows, and `total` counts
 *   every row matching the filter (window ignored).
 * - `within` restricts rows to the authorized subtrees (a row is inside when one of the scope uids
 *   is an ancestor-or-self of the row's uid); `{all: true}` or absent means no restriction.
 */

/** Filter fields shared by every list. */
export interface CommonFilter {
  uidp?: UidpFilter;
  within?: AccessScopes;
}

export interface GroupRow {
  uid: string;
  name: string;
  description: string;
  verified: boolean;
  createTime: number;
  updateTime: number;
}

export interface GroupFilter extends CommonFilter {
  name?: string;
}

/** What still lives under a group; a group can only be deleted when all are zero. */
export interface GroupChildren {
  groups: number;
  repos: number;
  identities: number;
  roles: number;
  roleBindings: number;
}

export interface GroupStore {
  get(uid: string): Promise<GroupRow | undefined>;
  /** The groups among `uids` that exist, in any order. */
  getMany(uids: readonly string[]): Promise<GroupRow[]>;
  /** The child group of `parentUid` ("" for roots) named `name`. */
  getByName(parentUid: string, name: string): Promise<GroupRow | undefined>;
  list(filter: GroupFilter, window: ListWindow): Promise<ListSlice<GroupRow>>;
  /** ALREADY_EXISTS when a sibling (same parent; roots share "") has the same name. */
  insert(row: GroupRow): Promise<void>;
  update(row: GroupRow): Promise<boolean>;
  delete(uid: string): Promise<boolean>;
  /** Direct children of each kind (role bindings and identities directly under the group). */
  children(uid: string): Promise<GroupChildren>;
}

export interface ClaimMatchData {
  issuer?: string;
  issuerPattern?: string;
  subject?: string;
  subjectPattern?: string;
  audience?: string;
  audiencePattern?: string;
  claims?: Record<string, string>;
  claimPatterns?: Record<string, string>;
}

export interface StaticKeysData {
  issuer: string;
  subject: string;
  issuerKeys: string;
  expirationTime?: number;
  audiences?: string[];
}

export interface IdentityRow {
  uid: string;
  name: string;
  description: string;
  email: string;
  claimMatch?: ClaimMatchData;
  staticKeys?: StaticKeysData;
  lastSeenTime?: number;
  createTime: number;
  updateTime: number;
}

export interface IdentityFilter extends CommonFilter {
  name?: string;
  relationship?: "claim_match" | "static_keys";
}

export interface IdentityStore {
  get(uid: string): Promise<IdentityRow | undefined>;
  /**
   * Inside a transaction: reads the identity and keeps it from being deleted until the transaction
   * ends (a KEY SHARE row lock on PostgreSQL; SQLite transactions hold the database's write lock).
   * Call it before writing a row that references the identity (a role binding), so an identity
   * delete either sees that row or commits first and this returns undefined.
   */
  lockForReference(uid: string): Promise<IdentityRow | undefined>;
  /**
   * Inside a transaction: reads the identity and locks it against new references until the
   * transaction ends (FOR UPDATE on PostgreSQL; waits for transactions holding lockForReference).
   * Call it before checking what still references the identity and deleting it.
   */
  lockForDelete(uid: string): Promise<IdentityRow | undefined>;
  getMany(uids: readonly string[]): Promise<IdentityRow[]>;
  list(filter: IdentityFilter, window: ListWindow): Promise<ListSlice<IdentityRow>>;
  insert(row: IdentityRow): Promise<void>;
  update(row: IdentityRow): Promise<boolean>;
  delete(uid: string): Promise<boolean>;
}

export interface RoleRow {
  uid: string;
  name: string;
  description: string;
  /** Capability enum numbers, ascending, no duplicates. */
  capabilities: number[];
  /** Built-in roles are root-level, seeded by the server and read-only through the API. */
  builtIn: boolean;
  createTime: number;
  updateTime: number;
}

export interface RoleFilter extends CommonFilter {
  name?: string;
  /** Also return built-in roles even when `within`/`uidp` would exclude root rows. */
  includeBuiltIn?: boolean;
}

export interface RoleStore {
  get(uid: string): Promise<RoleRow | undefined>;
  getMany(uids: readonly string[]): Promise<RoleRow[]>;
  list(filter: RoleFilter, window: ListWindow): Promise<ListSlice<RoleRow>>;
  insert(row: RoleRow): Promise<void>;
  /** Insert or replace a built-in role (used at start-up). */
  upsertBuiltIn(row: RoleRow): Promise<void>;
  update(row: RoleRow): Promise<boolean>;
  delete(uid: string): Promise<boolean>;
}

export interface RoleBindingRow {
  uid: string;
  /** The group the binding is under (the parent of its uid). */
  groupUid: string;
  identityUid: string;
  roleUid: string;
  createTime: number;
  updateTime: number;
}

export interface RoleBindingFilter extends CommonFilter {
  identityUid?: string;
  groupUid?: string;
  roleUid?: string;
}

/** One grant: the capabilities of a bound role at the binding's group. */
export interface Grant {
  groupUid: string;
  roleUid: string;
  capabilities: number[];
}

export interface RoleBindingStore {
  get(uid: string): Promise<RoleBindingRow | undefined>;
  list(filter: RoleBindingFilter, window: ListWindow): Promise<ListSlice<RoleBindingRow>>;
  /** ALREADY_EXISTS when the same identity already holds the same role at the same group. */
  insert(row: RoleBindingRow): Promise<void>;
  update(row: RoleBindingRow): Promise<boolean>;
  delete(uid: string): Promise<boolean>;
  /** Deletes every binding directly under `groupUid` (used when the group itself is deleted). */
  deleteByGroup(groupUid: string): Promise<number>;
  /** Every grant of an identity (bindings joined with their roles' capabilities). */
  grantsOf(identityUid: string): Promise<Grant[]>;
  countByRole(roleUid: string): Promise<number>;
  countByIdentity(identityUid: string): Promise<number>;
}

export interface RepoRow {
  uid: string;
  /** The group the repo is under (the parent of its uid). */
  groupUid: string;
  name: string;
  description: string;
  readme: string;
  createTime: number;
  updateTime: number;
}

/** A repo as a list returns it: everything but the readme (a sub-resource of its own). */
export type RepoListRow = Omit<RepoRow, "readme">;

export interface RepoFilter extends CommonFilter {
  name?: string;
}

export interface RepoStore {
  get(uid: string): Promise<RepoRow | undefined>;
  getByName(groupUid: string, name: string): Promise<RepoRow | undefined>;
  list(filter: RepoFilter, window: ListWindow): Promise<ListSlice<RepoListRow>>;
  /**
   * The readmes of the repos among `uids` that exist, by uid, in one read (for a listed page of
   * repos, which a list answers without readmes). An empty readme is an entry too.
   */
  readmes(uids: readonly string[]): Promise<Map<string, string>>;
  /** ALREADY_EXISTS when the group already has a repo of that name. */
  insert(row: RepoRow): Promise<void>;
  update(row: RepoRow): Promise<boolean>;
  /** Deletes the repo, its tags and its tag history. */
  delete(uid: string): Promise<boolean>;
}

export interface TagRow {
  uid: string;
  repoUid: string;
  name: string;
  digest: string;
  deprecated: boolean;
  createTime: number;
  updateTime: number;
}

export interface TagFilter extends CommonFilter {
  name?: string;
  digest?: string;
  /** Only tags with updateTime >= this. */
  updatedSince?: number;
}

/**
 * One entry of a tag's history: the tag pointed to `digest` from `updateTime` on; an empty digest
 * records a delete (the tag resolved to nothing from then on).
 */
export interface TagHistoryRow {
  repoUid: string;
  tagName: string;
  digest: string;
  updateTime: number;
}

export interface TagStore {
  get(uid: string): Promise<TagRow | undefined>;
  getByName(repoUid: string, name: string): Promise<TagRow | undefined>;
  list(filter: TagFilter, window: ListWindow): Promise<ListSlice<TagRow>>;
  /**
   * Points tag `name` of `repoUid` at `digest` (creating it with `newUid` when missing) and sets
   * `deprecated`. When the digest changes (or the tag is new) a history row is appended in the
   * same transaction; an unchanged digest appends nothing. Returns the tag as stored.
   */
  put(args: {
    repoUid: string;
    name: string;
    digest: string;
    deprecated: boolean;
    newUid: string;
    now: number;
  }): Promise<TagRow>;
  /**
   * Deletes the tag and appends a history row with an empty digest (the tag stopped resolving at
   * `now`), in one transaction; false (and no history) when the tag did not exist.
   */
  delete(uid: string, now: number): Promise<boolean>;
  /** Tag names of `repoUid` in byte order, after `after` when given, at most `limit` (registry tags list). */
  names(repoUid: string, args: { after?: string; limit: number }): Promise<string[]>;
  /** True when a history row of one of `tagNames` in `repoUid` names `digest` (the tag points or pointed to it). */
  pointedTo(repoUid: string, tagNames: readonly string[], digest: string): Promise<boolean>;
  /** History of one tag, oldest first, within [start, end), at most `limit` rows. */
  history(args: {
    repoUid: string;
    tagName: string;
    start?: number;
    end?: number;
    limit: number;
  }): Promise<TagHistoryRow[]>;
}

/** The OpenID Connect settings of an identity provider; `clientSecret` never leaves the server. */
export interface OidcProviderData {
  issuer: string;
  clientId: string;
  /** "" for public (PKCE) clients. Read by the login flow only; services never return it. */
  clientSecret: string;
  additionalScopes: string[];
  groupsClaim: string;
  /** CorrelationRule enum number. */
  correlationRule: number;
  pkceEnabled: boolean;
}

export interface IdentityProviderRow {
  uid: string;
  /** The group the provider is under (the parent of its uid). */
  groupUid: string;
  name: string;
  description: string;
  /** Uid of the role bound to people on their first login. */
  defaultRole: string;
  oidc: OidcProviderData;
  createTime: number;
  updateTime: number;
}

export interface IdentityProviderFilter extends CommonFilter {
  name?: string;
}

export interface IdentityProviderStore {
  get(uid: string): Promise<IdentityProviderRow | undefined>;
  list(filter: IdentityProviderFilter, window: ListWindow): Promise<ListSlice<IdentityProviderRow>>;
  /** ALREADY_EXISTS when the group already has a provider of that name. */
  insert(row: IdentityProviderRow): Promise<void>;
  update(row: IdentityProviderRow): Promise<boolean>;
  /** Deletes the provider and, with it, its external group role mappings. */
  delete(uid: string): Promise<boolean>;
  /** Providers directly under `groupUid`. */
  countByGroup(groupUid: string): Promise<number>;
  /** Providers whose default role is `roleUid`. */
  countByDefaultRole(roleUid: string): Promise<number>;
}

export interface AccountAssociationRow {
  /** The group's uid: one association per group. */
  uid: string;
  name: string;
  description: string;
  amazon?: { account: string };
  google?: { projectId: string; projectNumber: string };
  azure?: { tenantId: string; clientIds: Record<string, string> };
  /** GitHub App id (decimal string) → its installations (ids as decimal strings). */
  github?: { appInstallations: Record<string, { installationId: string; name: string }[]> };
  createTime: number;
  updateTime: number;
}

export interface AccountAssociationFilter extends CommonFilter {
  name?: string;
}

export interface AccountAssociationStore {
  get(uid: string): Promise<AccountAssociationRow | undefined>;
  list(filter: AccountAssociationFilter, window: ListWindow): Promise<ListSlice<AccountAssociationRow>>;
  /** ALREADY_EXISTS when the group already has an association. */
  insert(row: AccountAssociationRow): Promise<void>;
  update(row: AccountAssociationRow): Promise<boolean>;
  delete(uid: string): Promise<boolean>;
}

export interface GroupInviteRow {
  uid: string;
  /** The group the invite is under (the parent of its uid). */
  groupUid: string;
  roleUid: string;
  /** "" when anyone holding the code may redeem it. */
  email: string;
  /** Hex SHA-256 of the code; the code itself is never stored. Unique. */
  codeHash: string;
  keyId: string;
  singleUse: boolean;
  expirationTime: number;
  createTime: number;
}

export interface GroupInviteFilter extends CommonFilter {
  keyId?: string;
}

export interface GroupInviteStore {
  get(uid: string): Promise<GroupInviteRow | undefined>;
  getByCodeHash(codeHash: string): Promise<GroupInviteRow | undefined>;
  /** Orders by uid or create_time (update_time reads as create_time). */
  list(filter: GroupInviteFilter, window: ListWindow): Promise<ListSlice<GroupInviteRow>>;
  insert(row: GroupInviteRow): Promise<void>;
  /** True only for the one caller that removed the row (single-use redemption relies on it). */
  delete(uid: string): Promise<boolean>;
  /** Deletes every invite directly under `groupUid`. */
  deleteByGroup(groupUid: string): Promise<number>;
}

export interface ExternalGroupRoleMappingRow {
  /** `<identity provider uid>/<16 hex>`. */
  uid: string;
  identityProviderUid: string;
  externalGroupId: string;
  roleUid: string;
  scope: string;
  createTime: number;
}

export interface ExternalGroupRoleMappingFilter extends CommonFilter {
  identityProviderUid?: string;
  externalGroupId?: string;
  roleUid?: string;
}

export interface ExternalGroupRoleMappingStore {
  get(uid: string): Promise<ExternalGroupRoleMappingRow | undefined>;
  /** Orders by uid or create_time (update_time reads as create_time). */
  list(
    filter: ExternalGroupRoleMappingFilter,
    window: ListWindow,
  ): Promise<ListSlice<ExternalGroupRoleMappingRow>>;
  /**
   * ALREADY_EXISTS when the provider already maps the same external group to the same role at the
   * same scope; NOT_FOUND when the provider does not exist.
   */
  insert(row: ExternalGroupRoleMappingRow): Promise<void>;
  delete(uid: string): Promise<boolean>;
  /** The mappings of provider `idpUid` whose external group is one of `externalGroupIds`. */
  forProvider(idpUid: string, externalGroupIds: readonly string[]): Promise<ExternalGroupRoleMappingRow[]>;
  countByRole(roleUid: string): Promise<number>;
}

export interface TermsAcceptanceRow {
  /** `<group uid>/<16 hex>`. */
  uid: string;
  groupUid: string;
  docId: string;
  /** Identity uid of who accepted. */
  acceptedBy: string;
  createTime: number;
}

export interface TermsAcceptanceFilter extends CommonFilter {
  /** Acceptances made at one of these groups. */
  groupUids?: readonly string[];
}

export interface TermsAcceptanceStore {
  /** Inserts `row` unless its group already accepted its document; true when inserted. */
  accept(row: TermsAcceptanceRow): Promise<boolean>;
  /** Orders by uid or create_time (update_time reads as create_time). */
  list(filter: TermsAcceptanceFilter, window: ListWindow): Promise<ListSlice<TermsAcceptanceRow>>;
  /** Deletes every acceptance made at `groupUid`. */
  deleteByGroup(groupUid: string): Promise<number>;
}

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

/** Small shared settings (e.g. the page-token secret), the same for every server process. */
export interface SettingsStore {
  get(key: string): Promise<string | undefined>;
  /** Sets `key` to `value` unless it already has a value; returns the value now stored. */
  putIfAbsent(key: string, value: string): Promise<string>;
  /** Sets `key` to `value`, replacing any value it had. */
  put(key: string, value: string): Promise<void>;
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

/** The EOL store with its list of rule-matched tags (declared here: it answers TagRows). */
export interface EolTagStore extends EolStore {
  /**
   * Tags some rule matches (its repo covered and the tag's name like its glob), filtered; ordered
   * and windowed like every store list (sort fields of tags).
   */
  listTags(filter: EolTagFilter, window: ListWindow): Promise<ListSlice<TagRow>>;
}

/** One handle on the metadata store; `transaction` gives a handle whose writes commit together. */
export interface Store {
  groups: GroupStore;
  identities: IdentityStore;
  roles: RoleStore;
  roleBindings: RoleBindingStore;
  repos: RepoStore;
  tags: TagStore;
  blobs: BlobRecordStore;
  manifests: ManifestStore;
  uploads: UploadStore;
  garbage: GarbageStore;
  signingKeys: SigningKeyStore;
  settings: SettingsStore;
  /** Withdrawn issuer tokens (`wharf admin tokens revoke`). */
  tokenRevocations: TokenRevocationStore;
  identityProviders: IdentityProviderStore;
  accountAssociations: AccountAssociationStore;
  groupInvites: GroupInviteStore;
  externalGroupRoleMappings: ExternalGroupRoleMappingStore;
  termsAcceptances: TermsAcceptanceStore;
  /** STS refresh tokens (and the identities' lastSeenTime marks of federation). */
  refreshTokens: RefreshTokenStore;
  loginSessions: LoginSessionStore;
  /** Webhook subscriptions of the events domain. */
  subscriptions: SubscriptionStore;
  /** The events outbox and its deliveries. */
  events: EventOutboxStore;
  /** The library catalogue (imported; ArtifactsService). */
  libraries: LibraryStore;
  /** Imported advisories and upstream vulnerability metadata (global, not an organization's). */
  advisories: AdvisoryStore;
  /** Vulnerability reports of image digests and their matches (ADR 0024). */
  vulnReports: VulnReportStore;
  /** End-of-life cycles and the rules mapping tags to them (`wharf import eol`, ADR 0031). */
  eol: EolTagStore;
  /**
   * Runs `fn` in one transaction; a throw rolls everything back and rethrows. Nested calls join.
   * `signal` (a request's, see RequestContext): once it fired, the transaction rolls back and
   * rejects with its reason instead of committing. It is checked before the transaction begins,
   * once it has begun (after any wait for the database's write lock), after every statement in it,
   * and right before the commit. A statement already running is not interrupted: PostgreSQL runs it
   * to its end (a row lock it waits for included), then the transaction rolls back.
   */
  transaction<T>(fn: (tx: Store) => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** Which engine this is: "sqlite" or "postgres". */
  readonly dialect: "sqlite" | "postgres";
  close(): Promise<void>;
}
