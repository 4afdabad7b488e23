import type { AdvisoryStore } from "./advisory-store.js";
import type { AuditStore } from "./audit-store.js";
import type { LoginSessionStore, SigningKeyStore, TokenRevocationStore } from "./auth-store.js";
import type { ChangeFeed } from "./change-feed.js";
import type { EolTagStore } from "./eol-store.js";
import type { EventOutboxStore, SubscriptionStore } from "./event-store.js";
import type {
  AccountAssociationStore,
  ExternalGroupRoleMappingStore,
  GroupInviteStore,
  GroupStore,
  IdentityProviderStore,
  IdentityStore,
  RoleBindingStore,
  RoleStore,
  TermsAcceptanceStore,
} from "./iam-store.js";
import type { ImmutabilityRuleStore } from "./immutability-store.js";
import type { InsightsStore } from "./insights-store.js";
import type { IntegrityStore } from "./integrity-store.js";
import type { LibraryStore } from "./library-store.js";
import type { PullPolicyStore } from "./pull-policy-store.js";
import type { RefreshTokenStore } from "./refresh-token-store.js";
import type {
  BlobRecordStore,
  GarbageStore,
  ManifestStore,
  RepoStore,
  TagStore,
  UploadStore,
} from "./registry-store.js";
import type { ReplicationStore } from "./replication-store.js";
import type { RetentionStore } from "./retention-store.js";
import type { SearchStore } from "./search-store.js";
import type { SettingsStore } from "./settings-store.js";
import type { TrustedKeyStore } from "./trusted-key-store.js";
import type { UpstreamStore } from "./upstream-store.js";
import type { UsageStore } from "./usage-store.js";
import type { VexStore } from "./vex-store.js";
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
 *
 * Each domain's sub-stores and rows are declared in its own file (iam-store.ts, registry-store.ts,
 * auth-store.ts, event-store.ts, …); `CommonFilter` is in common-filter.ts.
 */

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
  /** OpenVEX documents of image digests and their statements (ADR 0059). */
  vex: VexStore;
  /** End-of-life cycles and the rules mapping tags to them (`wharf import eol`, ADR 0031). */
  eol: EolTagStore;
  /** Immutability rules of tags under groups and repos (ADR 0045). */
  immutabilityRules: ImmutabilityRuleStore;
  /** Pull policies under groups and repos (ADR 0058). */
  pullPolicies: PullPolicyStore;
  /** Registry usage and quotas per organization (ADR 0047). */
  usage: UsageStore;
  /** The organization dashboard's aggregates: pushes per day, most vulnerable tags (ADR 0064). */
  insights: InsightsStore;
  /** Whole-table walks of the registry's metadata for `wharf fsck` and `wharf backup` (reads only). */
  integrity: IntegrityStore;
  /** Retention policies and the tags' pull times (ADR 0046). */
  retention: RetentionStore;
  /** The append-only audit log (ADR 0048). */
  audit: AuditStore;
  /** Upstreams of the pull-through cache (ADR 0051). */
  upstreams: UpstreamStore;
  /** Replication rules, their runs and the ON_PUSH cursors (ADR 0054). */
  replication: ReplicationStore;
  /** Public keys trusted to sign images, under groups and repos (ADR 0056). */
  trustedKeys: TrustedKeyStore;
  /** The search box's reads: repos, tags and images across the caller's scopes (ADR 0063). */
  search: SearchStore;
  /**
   * Runs `fn` in one transaction; a throw rolls everything back and rethrows. Nested calls join.
   * `signal` (a request's, see RequestContext): once it fired, the transaction rolls back and
   * rejects with its reason instead of committing. It is checked before the transaction begins,
   * once it has begun (after any wait for the database's write lock), after every statement in it,
   * and right before the commit. A statement already running is not interrupted: PostgreSQL runs it
   * to its end (a row lock it waits for included), then the transaction rolls back.
   */
  transaction<T>(fn: (tx: Store) => Promise<T>, signal?: AbortSignal): Promise<T>;
  /**
   * Every change committed to the database, by this process and (PostgreSQL, when the store was
   * opened with `listenForChanges`) by the others: what caches subscribe to (change-feed.ts).
   */
  readonly changes: ChangeFeed;
  /** Which engine this is: "sqlite" or "postgres". */
  readonly dialect: "sqlite" | "postgres";
  close(): Promise<void>;
}
