import type { Store } from "../store.js";
import { createAccountAssociationStore } from "./account-association-store.js";
import { createAdvisoryStore } from "./advisory-store.js";
import { createAuditStore } from "./audit-store.js";
import { createBlobRecordStore } from "./blob-record-store.js";
import { createEolStore } from "./eol-store.js";
import { createEventOutboxStore } from "./event-outbox-store.js";
import { createExternalGroupRoleMappingStore } from "./external-group-role-mapping-store.js";
import { createGarbageStore } from "./garbage-store.js";
import { createGroupInviteStore } from "./group-invite-store.js";
import { createGroupStore } from "./group-store.js";
import { createIdentityProviderStore } from "./identity-provider-store.js";
import { createIdentityStore } from "./identity-store.js";
import { createImmutabilityRuleStore } from "./immutability-rule-store.js";
import { createInsightsStore } from "./insights-store.js";
import { createIntegrityStore } from "./integrity-store.js";
import { createLibraryStore } from "./library-store.js";
import { createLoginSessionStore } from "./login-session-store.js";
import { createManifestStore } from "./manifest-store.js";
import { createPullPolicyStore } from "./pull-policy-store.js";
import { createRefreshTokenStore } from "./refresh-token-store.js";
import { createReplicationStore } from "./replication-store.js";
import { createRepoStore } from "./repo-store.js";
import { createRetentionStore } from "./retention-store.js";
import { createRoleBindingStore } from "./role-binding-store.js";
import { createRoleStore } from "./role-store.js";
import { createSearchStore } from "./search-store.js";
import { createSettingsStore } from "./settings-store.js";
import { createSigningKeyStore } from "./signing-key-store.js";
import type { SqlContext } from "./sql-context.js";
import { createSubscriptionStore } from "./subscription-store.js";
import { createTagStore } from "./tag-store.js";
import { createTermsAcceptanceStore } from "./terms-acceptance-store.js";
import { createTokenRevocationStore } from "./token-revocation-store.js";
import { createTrustedKeyStore } from "./trusted-key-store.js";
import { createUploadStore } from "./upload-store.js";
import { createUpstreamStore } from "./upstream-store.js";
import { createUsageStore } from "./usage-store.js";
import { createVexStore } from "./vex-store.js";
import { createVulnReportStore } from "./vuln-report-store.js";

/**
 * The Store over one SqlContext. `transaction(fn)` hands `fn` a Store bound to a single database
 * transaction: it commits when `fn` resolves and rolls back when it throws (rethrowing). Inside it,
 * `transaction` joins the same transaction, so only the outermost call decides commit or rollback.
 *
 * Inside `fn`, use only the `tx` handle: on SQLite the outer handle waits for the one connection,
 * which the transaction holds until `fn` returns (a deadlock).
 *
 * `close` of the root handle closes the database (idempotent); a transaction handle cannot close it.
 */
export function createSqlStore(ctx: SqlContext, close: () => Promise<void>): Store {
  const store: Store = {
    groups: createGroupStore(ctx),
    identities: createIdentityStore(ctx),
    roles: createRoleStore(ctx),
    roleBindings: createRoleBindingStore(ctx),
    repos: createRepoStore(ctx),
    tags: createTagStore(ctx),
    blobs: createBlobRecordStore(ctx),
    manifests: createManifestStore(ctx),
    uploads: createUploadStore(ctx),
    garbage: createGarbageStore(ctx),
    signingKeys: createSigningKeyStore(ctx),
    settings: createSettingsStore(ctx),
    tokenRevocations: createTokenRevocationStore(ctx),
    identityProviders: createIdentityProviderStore(ctx),
    accountAssociations: createAccountAssociationStore(ctx),
    groupInvites: createGroupInviteStore(ctx),
    externalGroupRoleMappings: createExternalGroupRoleMappingStore(ctx),
    termsAcceptances: createTermsAcceptanceStore(ctx),
    refreshTokens: createRefreshTokenStore(ctx),
    loginSessions: createLoginSessionStore(ctx),
    subscriptions: createSubscriptionStore(ctx),
    events: createEventOutboxStore(ctx),
    libraries: createLibraryStore(ctx),
    advisories: createAdvisoryStore(ctx),
    vulnReports: createVulnReportStore(ctx),
    vex: createVexStore(ctx),
    eol: createEolStore(ctx),
    immutabilityRules: createImmutabilityRuleStore(ctx),
    pullPolicies: createPullPolicyStore(ctx),
    integrity: createIntegrityStore(ctx),
    retention: createRetentionStore(ctx),
    usage: createUsageStore(ctx),
    insights: createInsightsStore(ctx),
    audit: createAuditStore(ctx),
    upstreams: createUpstreamStore(ctx),
    replication: createReplicationStore(ctx),
    trustedKeys: createTrustedKeyStore(ctx),
    search: createSearchStore(ctx),
    dialect: ctx.dialect.name,
    changes: ctx.changes,
    transaction: (fn, signal) => {
      if (!ctx.inTransaction) return ctx.transaction((tx) => fn(createSqlStore(tx, refuseClose)), signal);
      // Joined: the outermost call's signal watches the statements; this one is checked on entry.
      signal?.throwIfAborted();
      return fn(store);
    },
    close,
  };
  return store;
}

async function refuseClose(): Promise<void> {
  throw new Error("close() of a transaction handle: close the store that opened the transaction");
}
