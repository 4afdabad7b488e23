import type { Selectable } from "kysely";
import { alreadyExists } from "../../core/errors.js";
import type { RoleBindingRow, RoleBindingStore } from "../iam-store.js";
import { readInt } from "./dialect.js";
import { listWindow, TIME_SORT } from "./list-window.js";
import { commonPredicates, equalsIfSet } from "./predicates.js";
import type { RoleBindingsTable } from "./schema.js";
import { guardWrite, parentColumn, type SqlContext } from "./sql-context.js";

function toRoleBindingRow(r: Selectable<RoleBindingsTable>): RoleBindingRow {
  return {
    uid: r.uid,
    groupUid: r.parent_uid,
    identityUid: r.identity_uid,
    roleUid: r.role_uid,
    createTime: readInt(r.create_time),
    updateTime: readInt(r.update_time),
  };
}

/**
 * RoleBindingStore over `role_bindings` (parent_uid is the group); see `RoleBindingStore` in
 * iam-store.ts. Lists order by uid, create_time or update_time (a binding has no name). `grantsOf`
 * skips bindings whose role no longer exists and returns grants ordered by (groupUid, roleUid).
 * `groupUid` must be the parent of `uid`.
 */
export function createRoleBindingStore(ctx: SqlContext): RoleBindingStore {
  const { db } = ctx;
  const duplicate = (row: RoleBindingRow) => () =>
    alreadyExists(
      "role_binding",
      row.uid,
      `identity ${row.identityUid} already holds role ${row.roleUid} at group ${row.groupUid}`,
    );

  return {
    async get(uid) {
      const r = await db.selectFrom("role_bindings").selectAll().where("uid", "=", uid).executeTakeFirst();
      return r && toRoleBindingRow(r);
    },

    list(filter, window) {
      return listWindow(
        ctx,
        {
          table: "role_bindings",
          from: db.selectFrom("role_bindings"),
          where: (uid) => [
            ...equalsIfSet("identity_uid", filter.identityUid),
            ...equalsIfSet("parent_uid", filter.groupUid),
            ...equalsIfSet("role_uid", filter.roleUid),
            ...commonPredicates(filter, uid),
          ],
          sort: TIME_SORT,
          toRow: toRoleBindingRow,
        },
        window,
      );
    },

    async insert(row) {
      await guardWrite(
        ctx,
        () =>
          db
            .insertInto("role_bindings")
            .values({
              uid: row.uid,
              parent_uid: parentColumn(row.uid, row.groupUid),
              identity_uid: row.identityUid,
              role_uid: row.roleUid,
              create_time: row.createTime,
              update_time: row.updateTime,
            })
            .execute(),
        { unique: duplicate(row) },
      );
      ctx.changed("role_bindings");
    },

    async update(row) {
      const result = await guardWrite(
        ctx,
        () =>
          db
            .updateTable("role_bindings")
            .set({
              parent_uid: parentColumn(row.uid, row.groupUid),
              identity_uid: row.identityUid,
              role_uid: row.roleUid,
              update_time: row.updateTime,
            })
            .where("uid", "=", row.uid)
            .executeTakeFirst(),
        { unique: duplicate(row) },
      );
      ctx.changed("role_bindings");
      return result.numUpdatedRows > 0n;
    },

    async delete(uid) {
      const result = await db.deleteFrom("role_bindings").where("uid", "=", uid).executeTakeFirst();
      ctx.changed("role_bindings");
      return result.numDeletedRows > 0n;
    },

    async deleteByGroup(groupUid) {
      const result = await db
        .deleteFrom("role_bindings")
        .where("parent_uid", "=", groupUid)
        .executeTakeFirst();
      ctx.changed("role_bindings");
      return Number(result.numDeletedRows);
    },

    async grantsOf(identityUid) {
      const rows = await db
        .selectFrom("role_bindings as b")
        .innerJoin("roles as r", "r.uid", "b.role_uid")
        .select(["b.parent_uid", "b.role_uid", "r.capabilities"])
        .where("b.identity_uid", "=", identityUid)
        .orderBy("b.parent_uid")
        .orderBy("b.role_uid")
        .execute();
      return rows.map((r) => ({
        groupUid: r.parent_uid,
        roleUid: r.role_uid,
        capabilities: JSON.parse(r.capabilities) as number[],
      }));
    },

    async countByRole(roleUid) {
      const r = await db
        .selectFrom("role_bindings")
        .select((eb) => eb.fn.countAll<bigint>().as("n"))
        .where("role_uid", "=", roleUid)
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },

    async countByIdentity(identityUid) {
      const r = await db
        .selectFrom("role_bindings")
        .select((eb) => eb.fn.countAll<bigint>().as("n"))
        .where("identity_uid", "=", identityUid)
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },
  };
}
