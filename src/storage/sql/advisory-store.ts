import { createHash } from "node:crypto";
import { type Selectable, type SqlBool, sql } from "kysely";
import type {
  AdvisoryEventRow,
  AdvisoryFilter,
  AdvisoryRow,
  AdvisoryStore,
  ReviewState,
  SeverityRow,
  VulnMetadataRow,
} from "../advisory-store.js";
import { readInt, readOptionalInt } from "./dialect.js";
import { likeContainingLower } from "./like-pattern.js";
import { listWindow, TIME_SORT } from "./list-window.js";
import { allOf, isIn, NO_ROWS, type Predicate, type UidRef, uidpPredicates } from "./predicates.js";
import type { AdvisoriesTable, AdvisoryEventsTable } from "./schema.js";
import type { SqlContext } from "./sql-context.js";

/** Every advisories column a read needs (not search or content_hash). */
const ADVISORY_COLUMNS = [
  "uid",
  "advisory_id",
  "legacy_advisory_id",
  "author",
  "artifact_name",
  "artifact_type",
  "artifact_architecture",
  "component_name",
  "component_type",
  "component_location",
  "origin_package",
  "package_namespace",
  "severities",
  "findings",
  "create_time",
  "update_time",
  "delete_time",
] as const;

type AdvisoryColumns = Pick<Selectable<AdvisoriesTable>, (typeof ADVISORY_COLUMNS)[number]>;

function hashOf(value: unknown): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("base64url");
}

/** The advisory without its aliases and events, which are read separately. */
function toAdvisory(r: AdvisoryColumns): AdvisoryRow {
  const deleteTime = readOptionalInt(r.delete_time);
  return {
    uid: r.uid,
    advisoryId: r.advisory_id,
    legacyAdvisoryId: r.legacy_advisory_id,
    author: r.author,
    artifactName: r.artifact_name,
    artifactType: r.artifact_type,
    artifactArchitecture: r.artifact_architecture,
    componentName: r.component_name,
    componentType: r.component_type,
    componentLocation: r.component_location,
    originPackage: r.origin_package,
    packageNamespace: r.package_namespace,
    aliases: [],
    events: [],
    severities: JSON.parse(r.severities) as SeverityRow[],
    findings: r.findings,
    createTime: readInt(r.create_time),
    updateTime: readInt(r.update_time),
    ...(deleteTime === undefined ? {} : { deleteTime }),
  };
}

function toEvent(r: Selectable<AdvisoryEventsTable>): AdvisoryEventRow {
  return {
    uid: r.uid,
    time: readInt(r.time),
    type: r.type as AdvisoryEventRow["type"],
    author: r.author,
    reviewer: r.reviewer,
    reviewState: r.review_state as ReviewState,
    issue: r.issue,
    data: JSON.parse(r.data) as Record<string, unknown>,
  };
}

/** The type of the most recent approved event ("" when none is approved). */
export function latestApprovedType(events: readonly AdvisoryEventRow[]): string {
  let latest: AdvisoryEventRow | undefined;
  for (const e of events) {
    if (e.reviewState === "approved" && (latest === undefined || e.time >= latest.time)) latest = e;
  }
  return latest?.type ?? "";
}

/** What `query` searches: artifact name, component name and aliases, lower-cased, one per line. */
export function searchText(row: AdvisoryRow): string {
  return [row.artifactName, row.componentName, ...row.aliases].join("\n").toLowerCase();
}

const some = (values: readonly string[] | undefined): values is readonly string[] =>
  values !== undefined && values.length > 0;

/** The filter's predicates over `advisories` (ANDed). */
export function advisoryPredicates(filter: AdvisoryFilter, uid: UidRef): Predicate[] {
  const out: Predicate[] = [];
  const { childrenOf, inRoot: _rootOnly, ...uidp } = filter.uidp ?? {};
  out.push(...uidpPredicates(uidp, uid));
  // Advisories are root-level rows: none is anything's child (and every one is in the root).
  if (childrenOf) out.push(NO_ROWS);
  if (filter.within !== undefined && !filter.within.all && filter.within.uids.length === 0) out.push(NO_ROWS);
  const anyOf = (column: string, values: readonly string[] | undefined) => {
    if (some(values)) out.push(isIn(values, column));
  };
  anyOf("advisory_id", filter.advisoryIds);
  anyOf("legacy_advisory_id", filter.legacyAdvisoryIds);
  if (filter.origin) out.push(sql<SqlBool>`origin_package = ${filter.origin}`);
  else anyOf("artifact_name", filter.artifactNames);
  anyOf("artifact_type", filter.artifactTypes);
  anyOf("artifact_architecture", filter.artifactArchitectures);
  anyOf("component_name", filter.componentNames);
  anyOf("component_type", filter.componentTypes);
  anyOf("component_location", filter.componentLocations);
  if (some(filter.aliases)) {
    out.push(
      sql<SqlBool>`advisories.uid in (select advisory_uid from advisory_aliases where alias in (${sql.join(filter.aliases)}))`,
    );
  }
  const eventConditions: Predicate[] = [];
  const eventAnyOf = (column: string, values: readonly string[] | undefined) => {
    if (some(values)) eventConditions.push(sql<SqlBool>`${sql.ref(`e.${column}`)} in (${sql.join(values)})`);
  };
  eventAnyOf("review_state", filter.eventReviewStates);
  eventAnyOf("author", filter.eventAuthors);
  eventAnyOf("reviewer", filter.eventReviewers);
  eventAnyOf("type", filter.eventTypes);
  const eventWhere = allOf(eventConditions);
  if (eventWhere !== undefined) {
    out.push(
      sql<SqlBool>`exists (select 1 from advisory_events e where e.advisory_uid = advisories.uid and ${eventWhere})`,
    );
  }
  if (some(filter.excludeEventAuthors)) {
    out.push(
      sql<SqlBool>`not exists (select 1 from advisory_events x where x.advisory_uid = advisories.uid and x.author in (${sql.join(filter.excludeEventAuthors)}))`,
    );
  }
  if (filter.latestEventType) out.push(sql<SqlBool>`latest_event_type = ${filter.latestEventType}`);
  if (filter.query) out.push(sql<SqlBool>`search like ${likeContainingLower(filter.query)} escape '\\'`);
  if (!filter.showDeleted) out.push(sql<SqlBool>`delete_time is null`);
  return out;
}

/**
 * AdvisoryStore over `advisories`, `advisory_aliases`, `advisory_events` and the `vuln_metadata`
 * tables. Upserts compare a hash of the row they were written from, so re-importing unchanged data
 * writes nothing; a changed row replaces its aliases and events.
 */
export function createAdvisoryStore(ctx: SqlContext): AdvisoryStore {
  const { db } = ctx;

  /** Fills aliases and events of `rows` (two queries for the whole page). */
  async function withChildren(rows: AdvisoryRow[]): Promise<AdvisoryRow[]> {
    if (rows.length === 0) return rows;
    const uids = rows.map((r) => r.uid);
    const byUid = new Map(rows.map((r) => [r.uid, r]));
    const [aliases, events] = await Promise.all([
      db
        .selectFrom("advisory_aliases")
        .select(["advisory_uid", "alias"])
        .where("advisory_uid", "in", uids)
        .execute(),
      db
        .selectFrom("advisory_events")
        .selectAll()
        .where("advisory_uid", "in", uids)
        .orderBy("advisory_uid")
        .orderBy("position")
        .execute(),
    ]);
    for (const a of aliases) byUid.get(a.advisory_uid)?.aliases.push(a.alias);
    for (const row of rows) row.aliases.sort();
    for (const e of events) byUid.get(e.advisory_uid)?.events.push(toEvent(e));
    return rows;
  }

  return {
    async get(uid) {
      const row = await db
        .selectFrom("advisories")
        .select(ADVISORY_COLUMNS)
        .where("uid", "=", uid)
        .executeTakeFirst();
      return row && (await withChildren([toAdvisory(row)]))[0];
    },

    async list(filter, window) {
      const slice = await listWindow(
        ctx,
        {
          table: "advisories",
          from: db.selectFrom("advisories"),
          where: (uid) => advisoryPredicates(filter, uid),
          sort: TIME_SORT,
          columns: ADVISORY_COLUMNS,
          toRow: toAdvisory,
        },
        window,
      );
      return { rows: await withChildren(slice.rows), total: slice.total };
    },

    upsert(row) {
      const hash = hashOf(row);
      return ctx.transaction(async (tx) => {
        const existing = await tx.db
          .selectFrom("advisories")
          .select("content_hash")
          .where("uid", "=", row.uid)
          .executeTakeFirst();
        if (existing?.content_hash === hash) return "unchanged";
        const values = {
          advisory_id: row.advisoryId,
          legacy_advisory_id: row.legacyAdvisoryId,
          author: row.author,
          artifact_name: row.artifactName,
          artifact_type: row.artifactType,
          artifact_architecture: row.artifactArchitecture,
          component_name: row.componentName,
          component_type: row.componentType,
          component_location: row.componentLocation,
          origin_package: row.originPackage,
          package_namespace: row.packageNamespace,
          severities: JSON.stringify(row.severities),
          findings: row.findings,
          search: searchText(row),
          latest_event_type: latestApprovedType(row.events),
          content_hash: hash,
          create_time: row.createTime,
          update_time: row.updateTime,
          delete_time: row.deleteTime ?? null,
        };
        if (existing) {
          await tx.db.deleteFrom("advisory_aliases").where("advisory_uid", "=", row.uid).execute();
          await tx.db.deleteFrom("advisory_events").where("advisory_uid", "=", row.uid).execute();
          await tx.db.updateTable("advisories").set(values).where("uid", "=", row.uid).execute();
        } else {
          await tx.db
            .insertInto("advisories")
            .values({ uid: row.uid, ...values })
            .execute();
        }
        const aliases = [...new Set(row.aliases)];
        if (aliases.length > 0) {
          await tx.db
            .insertInto("advisory_aliases")
            .values(aliases.map((alias) => ({ alias, advisory_uid: row.uid })))
            .execute();
        }
        if (row.events.length > 0) {
          await tx.db
            .insertInto("advisory_events")
            .values(
              row.events.map((e, position) => ({
                uid: e.uid,
                advisory_uid: row.uid,
                position,
                time: e.time,
                type: e.type,
                author: e.author,
                reviewer: e.reviewer,
                review_state: e.reviewState,
                issue: e.issue,
                data: JSON.stringify(e.data),
              })),
            )
            .execute();
        }
        tx.changed("advisories", "advisory_aliases", "advisory_events");
        return existing ? "updated" : "created";
      });
    },

    async byOrigin(origin, aliases) {
      let query = db.selectFrom("advisories").select(ADVISORY_COLUMNS).where("delete_time", "is", null);
      if (origin !== "") query = query.where("origin_package", "=", origin);
      if (aliases.length > 0) {
        query = query.where(
          "uid",
          "in",
          db
            .selectFrom("advisory_aliases")
            .select("advisory_uid")
            .where("alias", "in", [...aliases]),
        );
      }
      const rows = await query
        .orderBy("origin_package")
        .orderBy("advisory_id")
        .orderBy("artifact_name")
        .execute();
      return withChildren(rows.map(toAdvisory));
    },

    async getMetadata(id) {
      const page = await this.listMetadata([id], { desc: false, limit: 1, skip: 0 });
      return page.rows[0];
    },

    upsertMetadata(row) {
      const hash = hashOf(row);
      return ctx.transaction(async (tx) => {
        const existing = await tx.db
          .selectFrom("vuln_metadata")
          .select("content_hash")
          .where("id", "=", row.id)
          .executeTakeFirst();
        if (existing?.content_hash === hash) return "unchanged";
        const values = {
          summary: row.summary,
          details: row.details,
          content_hash: hash,
          update_time: row.updateTime,
        };
        if (existing) {
          await tx.db.deleteFrom("vuln_metadata_references").where("id", "=", row.id).execute();
          await tx.db.deleteFrom("vuln_metadata_severities").where("id", "=", row.id).execute();
          await tx.db.updateTable("vuln_metadata").set(values).where("id", "=", row.id).execute();
        } else {
          await tx.db
            .insertInto("vuln_metadata")
            .values({ id: row.id, ...values })
            .execute();
        }
        if (row.references.length > 0) {
          await tx.db
            .insertInto("vuln_metadata_references")
            .values(row.references.map((r, position) => ({ id: row.id, position, type: r.type, url: r.url })))
            .execute();
        }
        if (row.severities.length > 0) {
          await tx.db
            .insertInto("vuln_metadata_severities")
            .values(
              row.severities.map((s, position) => ({
                id: row.id,
                position,
                type: s.type,
                vector: s.vector,
                base_score: s.baseScore,
                level: s.level,
              })),
            )
            .execute();
        }
        tx.changed("vuln_metadata", "vuln_metadata_references", "vuln_metadata_severities");
        return existing ? "updated" : "created";
      });
    },

    async listMetadata(ids, window) {
      const filtered = () => {
        let q = db.selectFrom("vuln_metadata");
        if (ids.length > 0) q = q.where("id", "in", [...ids]);
        return q;
      };
      let page = filtered().selectAll();
      if (window.afterId !== undefined) page = page.where("id", window.desc ? "<" : ">", window.afterId);
      page = page.orderBy("id", window.desc ? "desc" : "asc").limit(window.limit + 1);
      if (window.skip > 0) page = page.offset(window.skip);
      const [rows, counted] = await Promise.all([
        page.execute(),
        filtered().select(sql<bigint>`count(*)`.as("n")).executeTakeFirst(),
      ]);
      const found = rows.map((r) => r.id);
      const [refs, sevs] =
        found.length === 0
          ? [[], []]
          : await Promise.all([
              db
                .selectFrom("vuln_metadata_references")
                .selectAll()
                .where("id", "in", found)
                .orderBy("id")
                .orderBy("position")
                .execute(),
              db
                .selectFrom("vuln_metadata_severities")
                .selectAll()
                .where("id", "in", found)
                .orderBy("id")
                .orderBy("position")
                .execute(),
            ]);
      const out: VulnMetadataRow[] = rows.map((r) => ({
        id: r.id,
        summary: r.summary,
        details: r.details,
        references: refs.filter((x) => x.id === r.id).map((x) => ({ type: x.type, url: x.url })),
        severities: sevs
          .filter((x) => x.id === r.id)
          .map((x) => ({ type: x.type, vector: x.vector, baseScore: Number(x.base_score), level: x.level })),
        updateTime: readInt(r.update_time),
      }));
      return { rows: out, total: BigInt(counted?.n ?? 0) };
    },
  };
}
