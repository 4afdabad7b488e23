import { type Selectable, type SqlBool, sql } from "kysely";
import { alreadyExists } from "../../core/errors.js";
import type { RoleFilter, RoleRow, RoleStore } from "../iam-store.js";
import { readBool, readInt, type SqlDialect } from "./dialect.js";
import { listWindow, STANDARD_SORT } from "./list-window.js";
import {
  allOf,
  commonPredicates,
  either,
  equalsIfSet,
  isIn,
  type Predicate,
  type UidRef,
} from "./predicates.js";
import type { RolesTable } from "./schema.js";
import { guardWrite, parentColumn, type SqlContext } from "./sql-context.js";

function toRoleRow(r: Selectable<RolesTable>): RoleRow {
  return {
    uid: r.uid,
    name: r.name,
    description: r.description,
    capabilities: JSON.parse(r.capabilities) as number[],
    builtIn: readBool(r.built_in),
    createTime: readInt(r.create_time),
    updateTime: readInt(r.update_time),
  };
}

/** `name` AND (`uidp` AND `within`), with built-in roles let through the hierarchy part on request. */
function roleFilter(filter: RoleFilter, dialect: SqlDialect, uid: UidRef): Predicate[] {
  const name = equalsIfSet("name", filter.name);
  const scoped = allOf(commonPredicates(filter, uid));
  if (scoped === undefined) return name;
  if (!filter.includeBuiltIn) return [...name, scoped];
  return [...name, either(scoped, sql<SqlBool>`built_in = ${dialect.bool(true)}`)];
}

/**
 * RoleStore over the `roles` table; see `RoleStore` in iam-store.ts. Capabilities are stored as a
 * JSON array, as given. `upsertBuiltIn` inserts the row as built-in or replaces every field of an
 * existing one except createTime. `update` never changes createTime.
 */
export function createRoleStore(ctx: SqlContext): RoleStore {
  const { db, dialect } = ctx;
  const mutable = (row: RoleRow) => ({
    name: row.name,
    description: row.description,
    capabilities: JSON.stringify(row.capabilities),
    built_in: dialect.bool(row.builtIn),
    update_time: row.updateTime,
  });

  return {
    async get(uid) {
      const r = await db.selectFrom("roles").selectAll().where("uid", "=", uid).executeTakeFirst();
      return r && toRoleRow(r);
    },

    async getMany(uids) {
      if (uids.length === 0) return [];
      const rows = await db.selectFrom("roles").selectAll().where(isIn(uids)).execute();
      return rows.map(toRoleRow);
    },

    list(filter, window) {
      return listWindow(
        ctx,
        {
          table: "roles",
          from: db.selectFrom("roles"),
          where: (uid) => roleFilter(filter, dialect, uid),
          sort: STANDARD_SORT,
          toRow: toRoleRow,
        },
        window,
      );
    },

    async insert(row) {
      await guardWrite(
        ctx,
        () =>
          db
            .insertInto("roles")
            .values({
              uid: row.uid,
              parent_uid: parentColumn(row.uid),
              create_time: row.createTime,
              ...mutable(row),
            })
            .execute(),
        { unique: () => alreadyExists("role", row.uid, `role ${row.uid} already exists`) },
      );
      ctx.changed("roles");
    },

    async upsertBuiltIn(row) {
      const builtIn = { ...mutable(row), built_in: dialect.bool(true) };
      await db
        .insertInto("roles")
        .values({ uid: row.uid, parent_uid: parentColumn(row.uid), create_time: row.createTime, ...builtIn })
        .onConflict((oc) => oc.column("uid").doUpdateSet(builtIn))
        .execute();
      ctx.changed("roles");
    },

    async update(row) {
      const result = await db
        .updateTable("roles")
        .set(mutable(row))
        .where("uid", "=", row.uid)
        .executeTakeFirst();
      ctx.changed("roles");
      return result.numUpdatedRows > 0n;
    },

    async delete(uid) {
      const result = await db.deleteFrom("roles").where("uid", "=", uid).executeTakeFirst();
      ctx.changed("roles");
      return result.numDeletedRows > 0n;
    },
  };
}
