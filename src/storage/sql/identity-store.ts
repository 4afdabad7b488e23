import type { Selectable } from "kysely";
import { type SqlBool, sql } from "kysely";
import { alreadyExists } from "../../core/errors.js";
import type { ClaimMatchData, IdentityRow, IdentityStore, StaticKeysData } from "../iam-store.js";
import { readInt, readOptionalInt } from "./dialect.js";
import { listWindow, STANDARD_SORT } from "./list-window.js";
import { commonPredicates, equalsIfSet, isIn, type Predicate } from "./predicates.js";
import type { IdentitiesTable } from "./schema.js";
import { guardWrite, parentColumn, type SqlContext } from "./sql-context.js";

function toIdentityRow(r: Selectable<IdentitiesTable>): IdentityRow {
  const row: IdentityRow = {
    uid: r.uid,
    name: r.name,
    description: r.description,
    email: r.email,
    createTime: readInt(r.create_time),
    updateTime: readInt(r.update_time),
  };
  if (r.claim_match !== null) row.claimMatch = JSON.parse(r.claim_match) as ClaimMatchData;
  if (r.static_keys !== null) row.staticKeys = JSON.parse(r.static_keys) as StaticKeysData;
  const lastSeen = readOptionalInt(r.last_seen_time);
  if (lastSeen !== undefined) row.lastSeenTime = lastSeen;
  return row;
}

/** The columns an IdentityRow writes besides uid and create_time. */
function mutableColumns(row: IdentityRow) {
  // issuer/subject are copied out of the relationship so tokens can be matched by index later.
  const source = row.claimMatch ?? row.staticKeys;
  return {
    name: row.name,
    description: row.description,
    email: row.email,
    issuer: source?.issuer ?? null,
    subject: source?.subject ?? null,
    claim_match: row.claimMatch === undefined ? null : JSON.stringify(row.claimMatch),
    static_keys: row.staticKeys === undefined ? null : JSON.stringify(row.staticKeys),
    last_seen_time: row.lastSeenTime ?? null,
    update_time: row.updateTime,
  };
}

function relationshipPredicate(relationship: "claim_match" | "static_keys" | undefined): Predicate[] {
  if (relationship === undefined) return [];
  return [sql<SqlBool>`${sql.ref(relationship)} is not null`];
}

/**
 * IdentityStore over the `identities` table; see `IdentityStore` in iam-store.ts. claimMatch and
 * staticKeys round-trip as JSON; a duplicate uid is ALREADY_EXISTS. `update` never changes createTime.
 * The two row locks pair up on PostgreSQL: KEY SHARE (a reference is being written) conflicts with
 * FOR UPDATE (a delete is checking references) but not with itself nor with a plain update.
 */
export function createIdentityStore(ctx: SqlContext): IdentityStore {
  const { db } = ctx;

  async function getLocked(uid: string, lock: "reference" | "delete"): Promise<IdentityRow | undefined> {
    let query = db.selectFrom("identities").selectAll().where("uid", "=", uid);
    if (ctx.dialect.rowLocks) query = lock === "delete" ? query.forUpdate() : query.forKeyShare();
    const r = await query.executeTakeFirst();
    return r && toIdentityRow(r);
  }

  return {
    async get(uid) {
      const r = await db.selectFrom("identities").selectAll().where("uid", "=", uid).executeTakeFirst();
      return r && toIdentityRow(r);
    },

    lockForReference: (uid) => getLocked(uid, "reference"),

    lockForDelete: (uid) => getLocked(uid, "delete"),

    async getMany(uids) {
      if (uids.length === 0) return [];
      const rows = await db.selectFrom("identities").selectAll().where(isIn(uids)).execute();
      return rows.map(toIdentityRow);
    },

    list(filter, window) {
      return listWindow(
        ctx,
        {
          table: "identities",
          from: db.selectFrom("identities"),
          where: (uid) => [
            ...equalsIfSet("name", filter.name),
            ...relationshipPredicate(filter.relationship),
            ...commonPredicates(filter, uid),
          ],
          sort: STANDARD_SORT,
          toRow: toIdentityRow,
        },
        window,
      );
    },

    async insert(row) {
      await guardWrite(
        ctx,
        () =>
          db
            .insertInto("identities")
            .values({
              uid: row.uid,
              parent_uid: parentColumn(row.uid),
              create_time: row.createTime,
              ...mutableColumns(row),
            })
            .execute(),
        { unique: () => alreadyExists("identity", row.uid, `identity ${row.uid} already exists`) },
      );
      ctx.changed("identities");
    },

    async update(row) {
      const result = await db
        .updateTable("identities")
        .set(mutableColumns(row))
        .where("uid", "=", row.uid)
        .executeTakeFirst();
      ctx.changed("identities");
      return result.numUpdatedRows > 0n;
    },

    async delete(uid) {
      const result = await db.deleteFrom("identities").where("uid", "=", uid).executeTakeFirst();
      ctx.changed("identities");
      return result.numDeletedRows > 0n;
    },
  };
}
