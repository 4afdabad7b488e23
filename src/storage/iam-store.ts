import type { ListSlice, ListWindow } from "../core/list.js";
import type { CommonFilter } from "./common-filter.js";

/**
 * The IAM domain's rows: groups, identities, roles and role bindings, and what hangs off a group
 * (identity providers and their external group role mappings, account associations, invites,
 * terms acceptances). Conventions are those of store.ts (times in ms, undefined for missing).
 */

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
