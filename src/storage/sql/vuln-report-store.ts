import { type Selectable, type SqlBool, sql } from "kysely";
import { notFound } from "../../core/errors.js";
import { parentOf } from "../../core/uidp.js";
import type {
  VulnMatchRecord,
  VulnReportFilter,
  VulnReportRow,
  VulnReportStore,
} from "../vuln-report-store.js";
import { readInt, readOptionalInt } from "./dialect.js";
import { isIn, withinScopes } from "./predicates.js";
import type { VulnMatchesTable, VulnReportsTable } from "./schema.js";
import { guardWrite, type SqlContext } from "./sql-context.js";

/** Rows per multi-row INSERT of matches (15 columns each stays under SQLite's 32766 parameters). */
const MATCH_BATCH = 500;

function toReportRow(r: Selectable<VulnReportsTable>): VulnReportRow {
  const row: VulnReportRow = {
    uid: r.uid,
    repoUid: r.repo_uid,
    digest: r.digest,
    scanner: r.scanner,
    scannerVersion: r.scanner_version,
    envelope: r.envelope,
    rawDigest: r.raw_digest,
    rawSize: readInt(r.raw_size),
    matchCount: readInt(r.match_count),
    createTime: readInt(r.create_time),
    current: r.superseded_time === null,
  };
  const dbBuildTime = readOptionalInt(r.db_build_time);
  if (dbBuildTime !== undefined) row.dbBuildTime = dbBuildTime;
  return row;
}

function toMatch(r: Selectable<VulnMatchesTable>): VulnMatchRecord {
  return {
    vulnerabilityId: r.vulnerability_id,
    aliases: JSON.parse(r.aliases),
    severity: r.severity,
    cvss: JSON.parse(r.cvss),
    description: r.description,
    relatedUrls: JSON.parse(r.related_urls),
    fixVersions: JSON.parse(r.fix_versions),
    fixState: r.fix_state,
    packageName: r.package_name,
    packageVersion: r.package_version,
    packageType: r.package_type,
    purl: r.purl,
    locations: JSON.parse(r.locations),
  };
}

function filterPredicates(filter: VulnReportFilter) {
  const out = [...withinScopes(filter.within)];
  if (filter.repoUid) out.push(sql<SqlBool>`repo_uid = ${filter.repoUid}`);
  if (filter.digests) out.push(isIn(filter.digests, "digest"));
  if (filter.scanner) out.push(sql<SqlBool>`scanner = ${filter.scanner}`);
  if (filter.createdSince !== undefined) out.push(sql<SqlBool>`create_time >= ${filter.createdSince}`);
  if (filter.currentOnly) out.push(sql<SqlBool>`superseded_time is null`);
  return out;
}

/**
 * VulnReportStore over `vuln_reports` and `vuln_matches`; see vuln-report-store.ts. `insert` runs
 * in one transaction: on PostgreSQL a transaction-scoped advisory lock on (repo, digest, scanner)
 * serialises concurrent uploads of the same report key (SQLite transactions already hold the write
 * lock), so exactly one report stays current.
 */
export function createVulnReportStore(ctx: SqlContext): VulnReportStore {
  const { db } = ctx;
  return {
    insert(row, matches) {
      if (parentOf(row.uid) !== row.repoUid)
        throw new Error(`store: "${row.repoUid}" is not the parent of "${row.uid}"`);
      return ctx.transaction(async (tx) => {
        // Caches of decisions that read reports (pull policies) drop their entries on this batch.
        tx.changed("vuln_reports");
        if (tx.dialect.name === "postgres") {
          const key = `vuln-report|${row.repoUid}|${row.digest}|${row.scanner}`;
          await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(tx.db);
        }
        await tx.db
          .insertInto("blobs")
          .values({ digest: row.rawDigest, size: row.rawSize, create_time: row.createTime })
          .onConflict((oc) => oc.column("digest").doNothing())
          .execute();
        await tx.db
          .updateTable("vuln_reports")
          .set({ superseded_time: row.createTime })
          .where("repo_uid", "=", row.repoUid)
          .where("digest", "=", row.digest)
          .where("scanner", "=", row.scanner)
          .where("superseded_time", "is", null)
          .execute();
        await guardWrite(
          tx,
          () =>
            tx.db
              .insertInto("vuln_reports")
              .values({
                uid: row.uid,
                repo_uid: row.repoUid,
                digest: row.digest,
                scanner: row.scanner,
                scanner_version: row.scannerVersion,
                db_build_time: row.dbBuildTime ?? null,
                envelope: row.envelope,
                raw_digest: row.rawDigest,
                raw_size: row.rawSize,
                match_count: matches.length,
                create_time: row.createTime,
                superseded_time: null,
              })
              .execute(),
          { foreignKey: () => notFound("repo", row.repoUid) },
        );
        for (let i = 0; i < matches.length; i += MATCH_BATCH) {
          await tx.db
            .insertInto("vuln_matches")
            .values(
              matches.slice(i, i + MATCH_BATCH).map((m, j) => ({
                report_uid: row.uid,
                ordinal: i + j,
                vulnerability_id: m.vulnerabilityId,
                aliases: JSON.stringify(m.aliases),
                severity: m.severity,
                cvss: JSON.stringify(m.cvss),
                description: m.description,
                related_urls: JSON.stringify(m.relatedUrls),
                fix_versions: JSON.stringify(m.fixVersions),
                fix_state: m.fixState,
                package_name: m.packageName,
                package_version: m.packageVersion,
                package_type: m.packageType,
                purl: m.purl,
                locations: JSON.stringify(m.locations),
              })),
            )
            .execute();
        }
        return { ...row, matchCount: matches.length, current: true };
      });
    },

    async get(uid) {
      const r = await db.selectFrom("vuln_reports").selectAll().where("uid", "=", uid).executeTakeFirst();
      return r && toReportRow(r);
    },

    async current(repoUid, digest, scanner) {
      let query = db
        .selectFrom("vuln_reports")
        .selectAll()
        .where("repo_uid", "=", repoUid)
        .where("digest", "=", digest)
        .where("superseded_time", "is", null);
      if (scanner !== undefined) query = query.where("scanner", "=", scanner);
      const r = await query.orderBy("create_time", "desc").orderBy("uid", "desc").limit(1).executeTakeFirst();
      return r && toReportRow(r);
    },

    async list(filter, limit) {
      let query = db.selectFrom("vuln_reports").selectAll();
      for (const p of filterPredicates(filter)) query = query.where(p);
      const rows = await query.orderBy("create_time", "desc").orderBy("uid", "desc").limit(limit).execute();
      return rows.map(toReportRow);
    },

    async find({ digest, scanner, createTime, within }) {
      let query = db
        .selectFrom("vuln_reports")
        .selectAll()
        .where("digest", "=", digest)
        .where("scanner", "=", scanner)
        .where(sql<SqlBool>`create_time = ${createTime}`);
      for (const p of withinScopes(within)) query = query.where(p);
      const r = await query.orderBy("uid").limit(1).executeTakeFirst();
      return r && toReportRow(r);
    },

    async matches(reportUids) {
      const out = new Map<string, VulnMatchRecord[]>(reportUids.map((uid) => [uid, []]));
      if (reportUids.length === 0) return out;
      const rows = await db
        .selectFrom("vuln_matches")
        .selectAll()
        .where(isIn(reportUids, "report_uid"))
        .orderBy("report_uid")
        .orderBy("ordinal")
        .execute();
      for (const r of rows) out.get(r.report_uid)?.push(toMatch(r));
      return out;
    },
  };
}
