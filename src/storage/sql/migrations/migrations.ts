import type { Migration, MigrationProvider } from "kysely";
import type { DialectName } from "../dialect.js";
import { initialMigration } from "./0001-initial.js";
import { registryDataMigration } from "./0002-registry-data.js";
import { repoListIndexMigration } from "./0003-repo-list-index.js";
import { iamFederationMigration } from "./0004-iam-federation.js";
import { refreshTokensMigration } from "./0005-refresh-tokens.js";
import { loginSessionsMigration } from "./0006-login-sessions.js";
import { eventsMigration } from "./0007-events.js";
import { eventCursorsMigration } from "./0008-event-cursors.js";
import { eventGroupIndexMigration } from "./0009-event-group-index.js";
import { tokenRevocationsMigration } from "./0010-token-revocations.js";
import { vulnReportsMigration } from "./0011-vuln-reports.js";
import { advisoriesMigration } from "./0012-advisories.js";
import { librariesMigration } from "./0013-libraries.js";
import { eolMigration } from "./0014-eol.js";
import { dispatcherOwnersMigration } from "./0015-dispatcher-owners.js";
import { immutabilityRulesMigration } from "./0016-immutability-rules.js";
import { retentionMigration } from "./0017-retention.js";
import { usageQuotasMigration } from "./0018-usage-quotas.js";
import { auditLogMigration } from "./0019-audit-log.js";
import { deliveryRedeliveryMigration } from "./0020-delivery-redelivery.js";
import { upstreamsMigration } from "./0021-upstreams.js";
import { replicationMigration } from "./0022-replication.js";
import { trustedKeysMigration } from "./0023-trusted-keys.js";

/**
 * Every migration, by name. Names sort in application order (`NNNN-name`); a released migration is
 * never edited, only followed by a new one.
 */
export function migrationsFor(dialect: DialectName): Record<string, Migration> {
  return {
    "0001-initial": initialMigration(dialect),
    "0002-registry-data": registryDataMigration(dialect),
    "0003-repo-list-index": repoListIndexMigration(dialect),
    "0004-iam-federation": iamFederationMigration(dialect),
    "0005-refresh-tokens": refreshTokensMigration(dialect),
    "0006-login-sessions": loginSessionsMigration(dialect),
    "0007-events": eventsMigration(dialect),
    "0008-event-cursors": eventCursorsMigration(dialect),
    "0009-event-group-index": eventGroupIndexMigration(dialect),
    "0010-token-revocations": tokenRevocationsMigration(dialect),
    "0011-vuln-reports": vulnReportsMigration(dialect),
    "0012-advisories": advisoriesMigration(dialect),
    "0013-libraries": librariesMigration(dialect),
    "0014-eol": eolMigration(dialect),
    "0015-dispatcher-owners": dispatcherOwnersMigration(dialect),
    "0016-immutability-rules": immutabilityRulesMigration(dialect),
    "0017-retention": retentionMigration(dialect),
    "0018-usage-quotas": usageQuotasMigration(dialect),
    "0019-audit-log": auditLogMigration(dialect),
    "0020-delivery-redelivery": deliveryRedeliveryMigration(dialect),
    "0021-upstreams": upstreamsMigration(dialect),
    "0022-replication": replicationMigration(dialect),
    "0023-trusted-keys": trustedKeysMigration(dialect),
  };
}

/** A static MigrationProvider for Kysely's Migrator (no folder scan, so bundling cannot lose files). */
export function migrationProvider(dialect: DialectName): MigrationProvider {
  return { getMigrations: async () => migrationsFor(dialect) };
}
