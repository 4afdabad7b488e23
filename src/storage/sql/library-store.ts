import { type Selectable, type SqlBool, sql } from "kysely";
import type {
  LibraryArtifactRow,
  LibraryEcosystemName,
  LibraryStore,
  LibraryVersionRow,
} from "../library-store.js";
import { readBool, readInt } from "./dialect.js";
import { likeContainingLower } from "./like-pattern.js";
import { listWindow, type SortColumns, STANDARD_SORT } from "./list-window.js";
import { isIn, type Predicate } from "./predicates.js";
import type { LibraryArtifactsTable, LibraryVersionsTable } from "./schema.js";
import type { SqlContext } from "./sql-context.js";

const ARTIFACT_SORT: SortColumns = STANDARD_SORT;

const VERSION_SORT: SortColumns = {
  uid: STANDARD_SORT.uid,
  version: { column: "version_rank", numeric: true },
  create_time: { column: "publish_time", numeric: true },
  update_time: { column: "publish_time", numeric: true },
};

function toArtifactRow(r: Selectable<LibraryArtifactsTable>): LibraryArtifactRow {
  return {
    uid: r.uid,
    ecosystem: r.ecosystem as LibraryEcosystemName,
    name: r.name,
    description: r.description,
    latestVersion: r.latest_version,
    versionCount: readInt(r.version_count),
    remediatedCount: readInt(r.remediated_count),
    createTime: readInt(r.create_time),
    updateTime: readInt(r.update_time),
  };
}

function toVersionRow(r: Selectable<LibraryVersionsTable>): LibraryVersionRow {
  return {
    uid: r.uid,
    artifactUid: r.artifact_uid,
    version: r.version,
    description: r.description,
    publishTime: readInt(r.publish_time),
    sizeBytes: BigInt(r.size_bytes),
    remediated: readBool(r.remediated),
    cudaVersion: r.cuda_version,
    rank: readInt(r.version_rank),
  };
}

/**
 * LibraryStore over `library_artifacts` and `library_versions` (see the interface). Lists use the
 * shared keyset windows; the substring search is `name_lower LIKE '%q%'` (no index can serve a
 * leading wildcard: it filters the ordered scan).
 */
export function createLibraryStore(ctx: SqlContext): LibraryStore {
  const { db, dialect } = ctx;
  return {
    async getArtifact(uid) {
      const row = await db
        .selectFrom("library_artifacts")
        .selectAll()
        .where("uid", "=", uid)
        .executeTakeFirst();
      return row && toArtifactRow(row);
    },

    async putArtifact(row) {
      const columns = {
        description: row.description,
        latest_version: row.latestVersion,
        version_count: row.versionCount,
        remediated_count: row.remediatedCount,
        create_time: row.createTime,
        update_time: row.updateTime,
      };
      await db
        .insertInto("library_artifacts")
        .values({
          uid: row.uid,
          ecosystem: row.ecosystem,
          name: row.name,
          name_lower: row.name.toLowerCase(),
          ...columns,
        })
        .onConflict((oc) => oc.column("uid").doUpdateSet(columns))
        .execute();
      ctx.changed("library_artifacts");
    },

    async putVersion(row) {
      const stored = await db
        .selectFrom("library_versions")
        .selectAll()
        .where("uid", "=", row.uid)
        .executeTakeFirst();
      const columns = {
        version: row.version,
        description: row.description,
        publish_time: row.publishTime,
        size_bytes: row.sizeBytes,
        remediated: dialect.bool(row.remediated),
        cuda_version: row.cudaVersion,
      };
      if (stored === undefined) {
        await db
          .insertInto("library_versions")
          .values({ uid: row.uid, artifact_uid: row.artifactUid, version_rank: row.rank, ...columns })
          .execute();
        ctx.changed("library_versions");
        return "created";
      }
      const before = toVersionRow(stored);
      const same =
        before.version === row.version &&
        before.description === row.description &&
        before.publishTime === row.publishTime &&
        before.sizeBytes === row.sizeBytes &&
        before.remediated === row.remediated &&
        before.cudaVersion === row.cudaVersion;
      if (same) return "unchanged";
      await db.updateTable("library_versions").set(columns).where("uid", "=", row.uid).execute();
      ctx.changed("library_versions");
      return "updated";
    },

    async versionsOf(artifactUid) {
      const rows = await db
        .selectFrom("library_versions")
        .selectAll()
        .where("artifact_uid", "=", artifactUid)
        .execute();
      return rows.map(toVersionRow);
    },

    async setVersionRanks(ranks) {
      for (const { uid, rank } of ranks) {
        await db.updateTable("library_versions").set({ version_rank: rank }).where("uid", "=", uid).execute();
      }
      if (ranks.length > 0) ctx.changed("library_versions");
    },

    listArtifacts(filter, window) {
      const where = (): Predicate[] => {
        const out: Predicate[] = [isIn(filter.ecosystems, "ecosystem")];
        if (filter.query) {
          out.push(sql<SqlBool>`name_lower like ${likeContainingLower(filter.query)} escape '\\'`);
        }
        if (filter.remediated) out.push(sql<SqlBool>`remediated_count > 0`);
        if (filter.cudaVersion) {
          out.push(
            sql<SqlBool>`exists (select 1 from library_versions v where v.artifact_uid = library_artifacts.uid and v.cuda_version = ${filter.cudaVersion})`,
          );
        }
        return out;
      };
      return listWindow(
        ctx,
        {
          table: "library_artifacts",
          from: db.selectFrom("library_artifacts"),
          where,
          sort: ARTIFACT_SORT,
          toRow: toArtifactRow,
        },
        window,
      );
    },

    listVersions(artifactUid, window) {
      return listWindow(
        ctx,
        {
          table: "library_versions",
          from: db.selectFrom("library_versions"),
          where: () => [sql<SqlBool>`artifact_uid = ${artifactUid}`],
          sort: VERSION_SORT,
          toRow: toVersionRow,
        },
        window,
      );
    },

    async countArtifacts(ecosystems) {
      const counts = new Map<LibraryEcosystemName, number>(ecosystems.map((e) => [e, 0]));
      if (ecosystems.length === 0) return counts;
      const rows = await db
        .selectFrom("library_artifacts")
        .select(["ecosystem", sql<bigint>`count(*)`.as("n")])
        .where("ecosystem", "in", [...ecosystems])
        .groupBy("ecosystem")
        .execute();
      for (const r of rows) counts.set(r.ecosystem as LibraryEcosystemName, readInt(r.n));
      return counts;
    },
  };
}
