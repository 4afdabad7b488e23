import type { ColumnType } from "kysely";

/**
 * A bigint column (times in ms, counts). Both engines read it as a JS bigint (better-sqlite3 safe
 * integers, pg int8 parser); writes accept numbers.
 */
export type Int8Column = ColumnType<bigint, number | bigint, number | bigint>;

/** A nullable bigint column. */
export type NullableInt8Column = ColumnType<bigint | null, number | bigint | null, number | bigint | null>;

/** A boolean column: PostgreSQL `boolean`, SQLite integer 0/1 (read as 0n/1n). Write with `SqlDialect.bool`. */
export type BoolColumn = ColumnType<boolean | bigint, boolean | number, boolean | number>;

/** `groups`: the organization hierarchy. Unique (parent_uid, name). */
export interface GroupsTable {
  uid: string;
  parent_uid: string;
  name: string;
  description: string;
  verified: BoolColumn;
  create_time: Int8Column;
  update_time: Int8Column;
}

/** `identities`: claim_match / static_keys hold JSON text; issuer/subject are copied out of them for lookups. */
export interface IdentitiesTable {
  uid: string;
  parent_uid: string;
  name: string;
  description: string;
  email: string;
  issuer: string | null;
  subject: string | null;
  claim_match: string | null;
  static_keys: string | null;
  last_seen_time: NullableInt8Column;
  create_time: Int8Column;
  update_time: Int8Column;
}

/** `roles`: capabilities is a JSON array of capability numbers. */
export interface RolesTable {
  uid: string;
  parent_uid: string;
  name: string;
  description: string;
  capabilities: string;
  built_in: BoolColumn;
  create_time: Int8Column;
  update_time: Int8Column;
}

/** `role_bindings`: parent_uid is the group. Unique (parent_uid, identity_uid, role_uid). */
export interface RoleBindingsTable {
  uid: string;
  parent_uid: string;
  identity_uid: string;
  role_uid: string;
  create_time: Int8Column;
  update_time: Int8Column;
}

/** `repos`: parent_uid is the group. Unique (parent_uid, name). */
export interface ReposTable {
  uid: string;
  parent_uid: string;
  name: string;
  description: string;
  readme: string;
  create_time: Int8Column;
  update_time: Int8Column;
}

/** `tags`: parent_uid is the repo (FK, cascade). Unique (parent_uid, name). */
export interface TagsTable {
  uid: string;
  parent_uid: string;
  name: string;
  digest: string;
  deprecated: BoolColumn;
  create_time: Int8Column;
  update_time: Int8Column;
}

/** `tag_history`: append-only; `id` orders rows that share an update_time. repo_uid FK, cascade. */
export interface TagHistoryTable {
  id: ColumnType<bigint, never, never>;
  repo_uid: string;
  tag_name: string;
  digest: string;
  update_time: Int8Column;
  /** The deleted tag's uid on a delete record (migration 0016); NULL elsewhere and on older records. */
  tag_uid: ColumnType<string | null, string | null | undefined, never>;
}

/** `blobs`: content committed to blob storage, by digest. */
export interface BlobsTable {
  digest: string;
  size: Int8Column;
  create_time: Int8Column;
}

/** `repo_blobs`: which repo may serve which blob (pushed or mounted there). PK (repo_uid, digest). */
export interface RepoBlobsTable {
  repo_uid: string;
  digest: string;
  create_time: Int8Column;
}

/** `manifests`: manifest bytes per repo. PK (repo_uid, digest); `annotations` is JSON text. */
export interface ManifestsTable {
  repo_uid: string;
  digest: string;
  media_type: string;
  content: Uint8Array;
  size: Int8Column;
  subject_digest: string | null;
  artifact_type: string | null;
  annotations: string | null;
  create_time: Int8Column;
}

/** `manifest_references`: what each manifest points at (`kind` "blob" or "manifest"). */
export interface ManifestReferencesTable {
  repo_uid: string;
  manifest_digest: string;
  digest: string;
  kind: string;
}

/** `uploads`: open blob upload sessions. */
export interface UploadsTable {
  id: string;
  repo_uid: string;
  identity_uid: string;
  size: Int8Column;
  create_time: Int8Column;
  update_time: Int8Column;
}

/** `signing_keys`: the issuer's ES256 keys, by kid. */
export interface SigningKeysTable {
  kid: string;
  private_jwk: string;
  public_jwk: string;
  create_time: Int8Column;
  retire_time: NullableInt8Column;
}

/** `settings`: small key/value pairs shared by every server process. */
export interface SettingsTable {
  key: string;
  value: string;
}

/** `token_revocations`: withdrawn issuer tokens; `subject` NULL = every subject. */
export interface TokenRevocationsTable {
  id: ColumnType<bigint, never, never>;
  subject: string | null;
  issued_before: Int8Column;
  create_time: Int8Column;
  expire_time: Int8Column;
}

/** `refresh_tokens`: STS refresh tokens by SHA-256 of the token; JSON text for lists and `act`. */
export interface RefreshTokensTable {
  token_hash: string;
  family_uid: string;
  identity_uid: string;
  audience: string;
  scopes: string | null;
  caps: string | null;
  act: string | null;
  create_time: Int8Column;
  expire_time: Int8Column;
  spent_time: NullableInt8Column;
}

/** `login_sessions`: short-lived state of the browser login flow (ids are hashes of secrets). */
export interface LoginSessionsTable {
  id: string;
  kind: string;
  data: string;
  expire_time: Int8Column;
}

/** `identity_providers`: an organization's OIDC providers; parent_uid is the group. Unique (parent_uid, name). */
export interface IdentityProvidersTable {
  uid: string;
  parent_uid: string;
  name: string;
  description: string;
  default_role: string;
  issuer: string;
  client_id: string;
  /** Write-only through the API: the login flow reads it, services never return it. */
  client_secret: string;
  /** JSON array of strings. */
  additional_scopes: string;
  groups_claim: string;
  correlation_rule: Int8Column;
  pkce_enabled: BoolColumn;
  create_time: Int8Column;
  update_time: Int8Column;
}

/** `account_associations`: one per group, uid = the group's uid; each provider block is JSON text or NULL. */
export interface AccountAssociationsTable {
  uid: string;
  parent_uid: string;
  name: string;
  description: string;
  amazon: string | null;
  google: string | null;
  azure: string | null;
  github: string | null;
  create_time: Int8Column;
  update_time: Int8Column;
}

/** `group_invites`: parent_uid is the group; only the SHA-256 of the code is kept (unique). */
export interface GroupInvitesTable {
  uid: string;
  parent_uid: string;
  role_uid: string;
  email: string;
  code_hash: string;
  key_id: string;
  single_use: BoolColumn;
  expiration_time: Int8Column;
  create_time: Int8Column;
}

/** `external_group_role_mappings`: parent_uid is the identity provider (FK, cascade). Unique (parent_uid, external_group_id, role_uid, scope). */
export interface ExternalGroupRoleMappingsTable {
  uid: string;
  parent_uid: string;
  external_group_id: string;
  role_uid: string;
  scope: string;
  create_time: Int8Column;
}

/** `terms_acceptances`: parent_uid is the group. Unique (parent_uid, doc_id). */
export interface TermsAcceptancesTable {
  uid: string;
  parent_uid: string;
  doc_id: string;
  accepted_by: string;
  create_time: Int8Column;
}

/**
 * `subscriptions`: webhook sinks; parent_uid is the group. The other columns belong to delivery:
 * the lease, the cursor (last event seq done with), and the failed attempts at the event after it.
 */
export interface SubscriptionsTable {
  uid: string;
  parent_uid: string;
  sink: string;
  lease_owner: ColumnType<string, string | undefined, string>;
  lease_until: ColumnType<bigint, number | bigint | undefined, number | bigint>;
  retry_time: ColumnType<bigint, number | bigint | undefined, number | bigint>;
  cursor_seq: ColumnType<bigint, number | bigint | undefined, number | bigint>;
  attempts: ColumnType<bigint, number | bigint | undefined, number | bigint>;
  last_attempt_time: ColumnType<bigint, number | bigint | undefined, number | bigint>;
  last_status: ColumnType<bigint, number | bigint | undefined, number | bigint>;
  last_error: ColumnType<string, string | undefined, string>;
  /** The cursor it started at (migration 0020): its stream's deliveries are the events after it. */
  start_seq: ColumnType<bigint, number | bigint | undefined, number | bigint>;
  create_time: Int8Column;
  update_time: Int8Column;
}

/**
 * `dispatcher_owners` (migration 0015): the event dispatchers running, by lease owner id, with
 * their last heartbeat; a lane whose owner stopped heart-beating may be taken over (ADR 0037).
 */
export interface DispatcherOwnersTable {
  owner: string;
  heartbeat_time: Int8Column;
  host: string;
  pid: Int8Column;
  start_time: Int8Column;
}

/** `events`: the outbox; `extensions` is a JSON object of CloudEvents extension attributes, `data` the JSON body. */
export interface EventsTable {
  seq: ColumnType<bigint, never, never>;
  id: string;
  type: string;
  source: string;
  subject: string;
  group_uid: string;
  time: Int8Column;
  extensions: string;
  data: string;
}

/** `event_dead_letters`: deliveries given up on, one per (subscription, event). */
export interface EventDeadLettersTable {
  subscription_uid: string;
  event_seq: Int8Column;
  attempts: Int8Column;
  last_attempt_time: Int8Column;
  last_status: Int8Column;
  last_error: string;
  /** The delivery that sends it again ("" while it is a dead letter; migration 0020). */
  requeued_as: ColumnType<string, string | undefined, string>;
}

/**
 * `event_redeliveries` (migration 0020, ADR 0049): deliveries queued again, each with its own state
 * (`pending`, `delivered`, `failed`) and attempts; `seq` orders a subscription's.
 */
export interface EventRedeliveriesTable {
  seq: ColumnType<bigint, never, never>;
  uid: string;
  subscription_uid: string;
  event_seq: Int8Column;
  redelivery_of: string;
  state: string;
  attempts: ColumnType<bigint, number | bigint | undefined, number | bigint>;
  last_attempt_time: ColumnType<bigint, number | bigint | undefined, number | bigint>;
  last_status: ColumnType<bigint, number | bigint | undefined, number | bigint>;
  last_error: ColumnType<string, string | undefined, string>;
  requeued_as: ColumnType<string, string | undefined, string>;
  create_time: Int8Column;
}

/** `library_artifacts`: the library catalogue's packages, aggregated from their versions. Unique (ecosystem, name). */
export interface LibraryArtifactsTable {
  uid: string;
  ecosystem: string;
  name: string;
  /** lower(name), for the case-insensitive substring search. */
  name_lower: string;
  description: string;
  latest_version: string;
  version_count: Int8Column;
  remediated_count: Int8Column;
  create_time: Int8Column;
  update_time: Int8Column;
}

/** `library_versions`: one row per imported version; `version_rank` orders an artifact's versions. */
export interface LibraryVersionsTable {
  uid: string;
  artifact_uid: string;
  version: string;
  description: string;
  publish_time: Int8Column;
  size_bytes: Int8Column;
  remediated: BoolColumn;
  cuda_version: string;
  version_rank: Int8Column;
}

/**
 * `advisories` (ADR 0025): severities is a JSON array of SeverityRow; search the lower-cased
 * artifact name, component name and aliases; latest_event_type "" when no event is approved.
 */
export interface AdvisoriesTable {
  uid: string;
  advisory_id: string;
  legacy_advisory_id: string;
  author: string;
  artifact_name: string;
  artifact_type: string;
  artifact_architecture: string;
  component_name: string;
  component_type: string;
  component_location: string;
  origin_package: string;
  package_namespace: string;
  severities: string;
  findings: string;
  search: string;
  latest_event_type: string;
  content_hash: string;
  create_time: Int8Column;
  update_time: Int8Column;
  delete_time: NullableInt8Column;
}

/** `advisory_aliases`: primary key (alias, advisory_uid). */
export interface AdvisoryAliasesTable {
  alias: string;
  advisory_uid: string;
}

/** `advisory_events`: data is the API-shaped payload as JSON text. */
export interface AdvisoryEventsTable {
  uid: string;
  advisory_uid: string;
  position: number;
  time: Int8Column;
  type: string;
  author: string;
  reviewer: string;
  review_state: string;
  issue: string;
  data: string;
}

/** `vuln_metadata`: upstream vulnerability records by id. */
export interface VulnMetadataTable {
  id: string;
  summary: string;
  details: string;
  content_hash: string;
  update_time: Int8Column;
}

/** `vuln_metadata_references`: primary key (id, position). */
export interface VulnMetadataReferencesTable {
  id: string;
  position: number;
  type: string;
  url: string;
}

/** `vuln_metadata_severities`: primary key (id, position). */
export interface VulnMetadataSeveritiesTable {
  id: string;
  position: number;
  type: string;
  vector: string;
  base_score: number;
  level: string;
}

/** `audit_records` (migration 0019): the append-only audit log; `act` is JSON text or NULL. */
export interface AuditRecordsTable {
  seq: ColumnType<bigint, never, never>;
  uid: string;
  time: Int8Column;
  group_uid: string;
  actor: string;
  act: string | null;
  action: string;
  resource: string;
  result_code: string;
  result_reason: string;
  request_id: string;
  source_address: string;
  user_agent: string;
}

/** Every table of the metadata database, as Kysely sees it. */
export interface Database {
  groups: GroupsTable;
  identities: IdentitiesTable;
  roles: RolesTable;
  role_bindings: RoleBindingsTable;
  repos: ReposTable;
  tags: TagsTable;
  tag_history: TagHistoryTable;
  blobs: BlobsTable;
  repo_blobs: RepoBlobsTable;
  manifests: ManifestsTable;
  manifest_references: ManifestReferencesTable;
  uploads: UploadsTable;
  signing_keys: SigningKeysTable;
  settings: SettingsTable;
  token_revocations: TokenRevocationsTable;
  identity_providers: IdentityProvidersTable;
  account_associations: AccountAssociationsTable;
  group_invites: GroupInvitesTable;
  external_group_role_mappings: ExternalGroupRoleMappingsTable;
  terms_acceptances: TermsAcceptancesTable;
  refresh_tokens: RefreshTokensTable;
  login_sessions: LoginSessionsTable;
  subscriptions: SubscriptionsTable;
  events: EventsTable;
  event_dead_letters: EventDeadLettersTable;
  event_redeliveries: EventRedeliveriesTable;
  dispatcher_owners: DispatcherOwnersTable;
  library_artifacts: LibraryArtifactsTable;
  library_versions: LibraryVersionsTable;
  advisories: AdvisoriesTable;
  advisory_aliases: AdvisoryAliasesTable;
  advisory_events: AdvisoryEventsTable;
  vuln_metadata: VulnMetadataTable;
  vuln_metadata_references: VulnMetadataReferencesTable;
  vuln_metadata_severities: VulnMetadataSeveritiesTable;
  vuln_reports: VulnReportsTable;
  vuln_matches: VulnMatchesTable;
  eol_cycles: EolCyclesTable;
  eol_rules: EolRulesTable;
  immutability_rules: ImmutabilityRulesTable;
  retention_policies: RetentionPoliciesTable;
  tag_pull_times: TagPullTimesTable;
  org_usage: OrgUsageTable;
  org_usage_digests: OrgUsageDigestsTable;
  audit_records: AuditRecordsTable;
  upstreams: UpstreamsTable;
  trusted_keys: TrustedKeysTable;
  replication_rules: ReplicationRulesTable;
  replication_runs: ReplicationRunsTable;
  replication_push_cursors: ReplicationPushCursorsTable;
}

/** Stored vulnerability reports (migration 0011); `superseded_time` NULL marks the current one. */
export interface VulnReportsTable {
  uid: string;
  repo_uid: string;
  digest: string;
  scanner: string;
  scanner_version: string;
  db_build_time: NullableInt8Column;
  envelope: string;
  raw_digest: string;
  raw_size: Int8Column;
  match_count: Int8Column;
  create_time: Int8Column;
  superseded_time: NullableInt8Column;
}

/** The normalised matches of a report; list columns are JSON text. */
export interface VulnMatchesTable {
  report_uid: string;
  ordinal: Int8Column;
  vulnerability_id: string;
  aliases: string;
  severity: string;
  cvss: string;
  description: string;
  related_urls: string;
  fix_versions: string;
  fix_state: string;
  package_name: string;
  package_version: string;
  package_type: string;
  purl: string;
  locations: string;
}

/** `eol_cycles` (migration 0014): primary key (product, cycle); dates are ms, NULL when unknown. */
export interface EolCyclesTable {
  product: string;
  cycle: string;
  codename: string;
  release_date: NullableInt8Column;
  eol_date: NullableInt8Column;
  eol_undated: BoolColumn;
  lts: BoolColumn;
  lts_from: NullableInt8Column;
  latest_version: string;
  latest_release_date: NullableInt8Column;
  support_end_date: NullableInt8Column;
  extended_support_end_date: NullableInt8Column;
}

/** `eol_rules` (migration 0014): primary key (org_uid, repo_name, tag_glob). */
export interface EolRulesTable {
  org_uid: string;
  repo_name: string;
  tag_glob: string;
  like_pattern: string;
  product: string;
  create_time: Int8Column;
}

/** `immutability_rules` (migration 0016): parent_uid is a group or a repo; tag_patterns is JSON text. */
export interface ImmutabilityRulesTable {
  uid: string;
  parent_uid: string;
  tag_patterns: string;
  description: string;
  create_time: Int8Column;
  update_time: Int8Column;
}
/** `retention_policies` (migration 0017): rules and last_run are JSON text; schedule_ms 0 = manual. */
export interface RetentionPoliciesTable {
  uid: string;
  parent_uid: string;
  description: string;
  rules: string;
  schedule: string;
  schedule_ms: Int8Column;
  next_run_time: NullableInt8Column;
  run_until: Int8Column;
  last_run: string | null;
  create_time: Int8Column;
  update_time: Int8Column;
}

/** `tag_pull_times` (migration 0017): the last pull of each tag, by repo and tag name. */
export interface TagPullTimesTable {
  repo_uid: string;
  tag_name: string;
  pull_time: Int8Column;
}

/** `org_usage` (migration 0018): an organization's stored bytes and its quota (0 = unlimited). */
export interface OrgUsageTable {
  org_uid: string;
  storage_bytes: Int8Column;
  quota_storage_bytes: Int8Column;
  quota_repo_count: Int8Column;
  update_time: Int8Column;
}

/** `org_usage_digests` (migration 0018): primary key (org_uid, digest); counted while `refs` > 0. */
export interface OrgUsageDigestsTable {
  org_uid: string;
  digest: string;
  size: Int8Column;
  refs: Int8Column;
}

/**
 * `upstreams` (migration 0021): an organization's pull-through cache upstreams. Unique
 * (parent_uid, name); `password` is sealed (SecretBox), "" when none.
 */
export interface UpstreamsTable {
  uid: string;
  parent_uid: string;
  name: string;
  url: string;
  username: string;
  password: string;
  tag_ttl_ms: Int8Column;
  create_time: Int8Column;
  update_time: Int8Column;
}

/**
 * `trusted_keys` (migration 0023): public keys trusted to sign images, under a group or a repo.
 * Unique (parent_uid, name); `public_key_pem` is normalised SPKI PEM, `fingerprint` hex SHA-256 of its DER.
 */
export interface TrustedKeysTable {
  uid: string;
  parent_uid: string;
  name: string;
  public_key_pem: string;
  algorithm: string;
  fingerprint: string;
  create_time: Int8Column;
}
/** `replication_rules` (migration 0022): remote_password is sealed; interval_ms 0 unless INTERVAL. */
export interface ReplicationRulesTable {
  uid: string;
  parent_uid: string;
  name: string;
  direction: string;
  remote_url: string;
  remote_username: string;
  remote_password: string;
  repo_pattern: string;
  tag_pattern: string;
  destination: string;
  trigger: string;
  interval: string;
  interval_ms: Int8Column;
  enabled: BoolColumn;
  next_run_time: NullableInt8Column;
  create_time: Int8Column;
  update_time: Int8Column;
}

/** `replication_runs` (migration 0022): errors is JSON text; lease_owner "" when none. */
export interface ReplicationRunsTable {
  uid: string;
  rule_uid: string;
  trigger: string;
  state: string;
  create_time: Int8Column;
  start_time: NullableInt8Column;
  end_time: NullableInt8Column;
  copied_manifests: Int8Column;
  copied_blobs: Int8Column;
  copied_bytes: Int8Column;
  skipped_blobs: Int8Column;
  errors: string;
  errors_omitted: Int8Column;
  lease_owner: string;
  lease_until: Int8Column;
}

/** `replication_push_cursors` (migration 0022): the outbox seq each organization's ON_PUSH rules have passed. */
export interface ReplicationPushCursorsTable {
  org_uid: string;
  cursor_seq: Int8Column;
}
