import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * Registry usage and quotas (ADR 0047). `org_usage`: one row per organization with its stored bytes
 * (kept current by every manifest write and delete) and its quota (0 = unlimited).
 * `org_usage_digests`: per (organization, digest) the size and how many references keep it counted:
 * one per manifest row of that digest in the organization's repos, and one per blob reference of
 * those manifests. A digest counts in `storage_bytes` exactly while its `refs` is above 0.
 * Existing data is counted on upgrade. Organization uids are the first 40 characters of a uidp.
 */
export function usageQuotasMigration(dialect: DialectName): Migration {
  const key = dialect === "postgres" ? sql`text collate "C"` : sql`text`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("org_usage")
        .addColumn("org_uid", key, (c) => c.primaryKey())
        .addColumn("storage_bytes", "bigint", (c) => c.notNull())
        .addColumn("quota_storage_bytes", "bigint", (c) => c.notNull())
        .addColumn("quota_repo_count", "bigint", (c) => c.notNull())
        .addColumn("update_time", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("org_usage_digests")
        .addColumn("org_uid", key, (c) => c.notNull())
        .addColumn("digest", key, (c) => c.notNull())
        .addColumn("size", "bigint", (c) => c.notNull())
        .addColumn("refs", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("org_usage_digests_pkey", ["org_uid", "digest"])
        .execute();

      // Backfill: what the manifests and their blob references stored so far add up to. The OCI
      // empty blob is the one blob a manifest may reference without a blob row (2 bytes).
      await sql`
        insert into org_usage_digests (org_uid, digest, size, refs)
        select org_uid, digest, max(size), count(*) from (
          select substr(m.repo_uid, 1, 40) as org_uid, m.digest as digest, m.size as size
            from manifests m
          union all
          select substr(r.repo_uid, 1, 40), r.digest, coalesce(b.size, 2)
            from manifest_references r left join blobs b on b.digest = r.digest
            where r.kind = 'blob'
        ) counted group by org_uid, digest`.execute(db);
      const now = Date.now();
      await sql`
        insert into org_usage (org_uid, storage_bytes, quota_storage_bytes, quota_repo_count, update_time)
        select org_uid, sum(size), 0, 0, ${now} from org_usage_digests group by org_uid`.execute(db);
    },
  };
}
