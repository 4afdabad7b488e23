import type { Selectable } from "kysely";
import { alreadyExists } from "../../core/errors.js";
import type { GroupChildren, GroupRow, GroupStore } from "../iam-store.js";
import { readBool, readInt } from "./dialect.js";
import { listWindow, STANDARD_SORT } from "./list-window.js";
import { commonPredicates, equalsIfSet, isIn } from "./predicates.js";
import type { GroupsTable } from "./schema.js";
import { guardWrite, parentColumn, type SqlContext } from "./sql-context.js";

function toGroupRow(r: Selectable<GroupsTable>): GroupRow {
  return {
    uid: r.uid,
    name: r.name,
    description: r.description,
    verified: readBool(r.verified),
    createTime: readInt(r.create_time),
    updateTime: readInt(r.update_time),
  };
}

/**
 * GroupStore over the `groups` table; see `GroupStore` in iam-store.ts for the contract. `update`
 * writes every field but `createTime`, which never changes.
 */
export function createGroupStore(ctx: SqlContext): GroupStore {
  const { db, dialect } = ctx;
  const duplicate = (row: GroupRow) => () =>
    alreadyExists("group", row.name, `a group named "${row.name}" already exists under the same parent`);

  return {
    async get(uid) {
      const r = await db.selectFrom("groups").selectAll().where("uid", "=", uid).executeTakeFirst();
      return r && toGroupRow(r);
    },

    async getMany(uids) {
      if (uids.length === 0) return [];
      const rows = await db.selectFrom("groups").selectAll().where(isIn(uids)).execute();
      return rows.map(toGroupRow);
    },

    async getByName(parentUid, name) {
      const r = await db
        .selectFrom("groups")
        .selectAll()
        .where("parent_uid", "=", parentUid)
        .where("name", "=", name)
        .executeTakeFirst();
      return r && toGroupRow(r);
    },

    list(filter, window) {
      return listWindow(
        ctx,
        {
          table: "groups",
          from: db.selectFrom("groups"),
          where: (uid) => [...equalsIfSet("name", filter.name), ...commonPredicates(filter, uid)],
          sort: STANDARD_SORT,
          toRow: toGroupRow,
        },
        window,
      );
    },

    async insert(row) {
      await guardWrite(
        ctx,
        () =>
          db
            .insertInto("groups")
            .values({
              uid: row.uid,
              parent_uid: parentColumn(row.uid),
              name: row.name,
              description: row.description,
              verified: dialect.bool(row.verified),
              create_time: row.createTime,
              update_time: row.updateTime,
            })
            .execute(),
        { unique: duplicate(row) },
      );
      ctx.changed("groups");
    },

    async update(row) {
      const result = await guardWrite(
        ctx,
        () =>
          db
            .updateTable("groups")
            .set({
              name: row.name,
              description: row.description,
              verified: dialect.bool(row.verified),
              update_time: row.updateTime,
            })
            .where("uid", "=", row.uid)
            .executeTakeFirst(),
        { unique: duplicate(row) },
      );
      ctx.changed("groups");
      return result.numUpdatedRows > 0n;
    },

    delete(uid) {
      return ctx.transaction(async (tx) => {
        const result = await tx.db.deleteFrom("groups").where("uid", "=", uid).executeTakeFirst();
        // Rules have no foreign key (their parent is a group or a repo): they go with their parent.
        await tx.db.deleteFrom("immutability_rules").where("parent_uid", "=", uid).execute();
        await tx.db.deleteFrom("trusted_keys").where("parent_uid", "=", uid).execute();
        tx.changed("groups", "immutability_rules", "trusted_keys");
        return result.numDeletedRows > 0n;
      });
    },

    async children(uid): Promise<GroupChildren> {
      const r = await db
        .selectNoFrom((eb) => [
          eb
            .selectFrom("groups")
            .select(eb.fn.countAll<bigint>().as("n"))
            .where("parent_uid", "=", uid)
            .as("groups"),
          eb
            .selectFrom("repos")
            .select(eb.fn.countAll<bigint>().as("n"))
            .where("parent_uid", "=", uid)
            .as("repos"),
          eb
            .selectFrom("identities")
            .select(eb.fn.countAll<bigint>().as("n"))
            .where("parent_uid", "=", uid)
            .as("identities"),
          eb
            .selectFrom("roles")
            .select(eb.fn.countAll<bigint>().as("n"))
            .where("parent_uid", "=", uid)
            .as("roles"),
          eb
            .selectFrom("role_bindings")
            .select(eb.fn.countAll<bigint>().as("n"))
            .where("parent_uid", "=", uid)
            .as("role_bindings"),
        ])
        .executeTakeFirstOrThrow();
      return {
        groups: Number(r.groups ?? 0),
        repos: Number(r.repos ?? 0),
        identities: Number(r.identities ?? 0),
        roles: Number(r.roles ?? 0),
        roleBindings: Number(r.role_bindings ?? 0),
      };
    },
  };
}
