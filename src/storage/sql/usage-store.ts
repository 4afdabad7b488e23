import { type Selectable, sql } from "kysely";
import type { OrgUsageRow, UsageStore } from "../usage-store.js";
import { readInt } from "./dialect.js";
import { descendantBounds } from "./predicates.js";
import type { OrgUsageTable } from "./schema.js";
import { precompiled, type SqlContext } from "./sql-context.js";

// Read by every push (the quota check): compiled once per engine.
const selectUsage = precompiled((db) => db.selectFrom("org_usage").selectAll().where("org_uid", "=", ""));

function toRow(r: Selectable<OrgUsageTable>): OrgUsageRow {
  return {
    orgUid: r.org_uid,
    storageBytes: readInt(r.storage_bytes),
    quotaStorageBytes: readInt(r.quota_storage_bytes),
    quotaRepoCount: readInt(r.quota_repo_count),
    updateTime: readInt(r.update_time),
  };
}

/** UsageStore over `org_usage`, `org_usage_digests` and the registry tables; see usage-store.ts. */
export function createUsageStore(ctx: SqlContext): UsageStore {
  const { db } = ctx;
  return {
    async get(orgUid, opts) {
      if (!(opts?.forUpdate && ctx.dialect.rowLocks && ctx.inTransaction)) {
        const [r] = await selectUsage(ctx, [orgUid]);
        return r && toRow(r);
      }
      const r = await db
        .selectFrom("org_usage")
        .selectAll()
        .where("org_uid", "=", orgUid)
        .forUpdate()
        .executeTakeFirst();
      return r && toRow(r);
    },

    setQuota(orgUid, change, now) {
      return ctx.transaction(async (tx) => {
        const set = {
          ...(change.storageBytes === undefined ? {} : { quota_storage_bytes: change.storageBytes }),
          ...(change.repoCount === undefined ? {} : { quota_repo_count: change.repoCount }),
          update_time: now,
        };
        const r = await tx.db
          .insertInto("org_usage")
          .values({
            org_uid: orgUid,
            storage_bytes: 0,
            quota_storage_bytes: change.storageBytes ?? 0,
            quota_repo_count: change.repoCount ?? 0,
            update_time: now,
          })
          .onConflict((oc) => oc.column("org_uid").doUpdateSet(set))
          .returningAll()
          .executeTakeFirstOrThrow();
        return toRow(r);
      });
    },

    async counted(orgUid, digests) {
      const out = new Set<string>();
      for (let start = 0; start < digests.length; start += 500) {
        const rows = await db
          .selectFrom("org_usage_digests")
          .select("digest")
          .where("org_uid", "=", orgUid)
          .where("digest", "in", digests.slice(start, start + 500))
          .execute();
        for (const r of rows) out.add(r.digest);
      }
      return out;
    },

    async repoCount(groupUid) {
      const [from, to] = descendantBounds(groupUid);
      const repos = await db
        .selectFrom("repos")
        .select((eb) => eb.fn.countAll<number | bigint>().as("n"))
        .where("uid", ">", from)
        .where("uid", "<", to)
        .executeTakeFirstOrThrow();
      return readInt(repos.n);
    },

    async counts(groupUid) {
      const [from, to] = descendantBounds(groupUid);
      const tags = await db
        .selectFrom("tags")
        .select((eb) => eb.fn.countAll<number | bigint>().as("n"))
        .where("uid", ">", from)
        .where("uid", "<", to)
        .executeTakeFirstOrThrow();
      return { repoCount: await this.repoCount(groupUid), tagCount: readInt(tags.n) };
    },

    async recount(groupUid) {
      const [from, to] = descendantBounds(groupUid);
      // The OCI empty blob is the one blob a manifest may reference without a blob row (2 bytes).
      const { rows } = await sql<{ total: number | bigint | string | null }>`
        select sum(size) as total from (
          select digest, max(size) as size from (
            select m.digest as digest, m.size as size from manifests m
              where m.repo_uid > ${from} and m.repo_uid < ${to}
            union all
            select r.digest, coalesce(b.size, 2) from manifest_references r
              left join blobs b on b.digest = r.digest
              where r.kind = 'blob' and r.repo_uid > ${from} and r.repo_uid < ${to}
          ) refs group by digest
        ) distinct_digests`.execute(db);
      return Number(rows[0]?.total ?? 0);
    },
  };
}
