import type { Selectable } from "kysely";
import { alreadyExists } from "../../core/errors.js";
import type { GroupInviteRow, GroupInviteStore } from "../iam-store.js";
import { readBool, readInt } from "./dialect.js";
import { listWindow, type SortColumns, STANDARD_SORT } from "./list-window.js";
import { commonPredicates, equalsIfSet } from "./predicates.js";
import type { GroupInvitesTable } from "./schema.js";
import { guardWrite, parentColumn, type SqlContext } from "./sql-context.js";

/** Invites are never updated: update_time orders like create_time. */
const INVITE_SORT: SortColumns = {
  uid: STANDARD_SORT.uid,
  create_time: STANDARD_SORT.create_time,
  update_time: STANDARD_SORT.create_time,
};

function toGroupInviteRow(r: Selectable<GroupInvitesTable>): GroupInviteRow {
  return {
    uid: r.uid,
    groupUid: r.parent_uid,
    roleUid: r.role_uid,
    email: r.email,
    codeHash: r.code_hash,
    keyId: r.key_id,
    singleUse: readBool(r.single_use),
    expirationTime: readInt(r.expiration_time),
    createTime: readInt(r.create_time),
  };
}

/**
 * GroupInviteStore over `group_invites` (parent_uid is the group); see `GroupInviteStore` in
 * iam-store.ts. Only the SHA-256 of a code is stored; `delete` reports whether THIS call removed
 * the row, which is what makes single-use redemption atomic.
 */
export function createGroupInviteStore(ctx: SqlContext): GroupInviteStore {
  const { db, dialect } = ctx;
  return {
    async get(uid) {
      const r = await db.selectFrom("group_invites").selectAll().where("uid", "=", uid).executeTakeFirst();
      return r && toGroupInviteRow(r);
    },

    async getByCodeHash(codeHash) {
      const r = await db
        .selectFrom("group_invites")
        .selectAll()
        .where("code_hash", "=", codeHash)
        .executeTakeFirst();
      return r && toGroupInviteRow(r);
    },

    list(filter, window) {
      return listWindow(
        ctx,
        {
          table: "group_invites",
          from: db.selectFrom("group_invites"),
          where: (uid) => [...equalsIfSet("key_id", filter.keyId), ...commonPredicates(filter, uid)],
          sort: INVITE_SORT,
          toRow: toGroupInviteRow,
        },
        window,
      );
    },

    async insert(row) {
      await guardWrite(
        ctx,
        () =>
          db
            .insertInto("group_invites")
            .values({
              uid: row.uid,
              parent_uid: parentColumn(row.uid, row.groupUid),
              role_uid: row.roleUid,
              email: row.email,
              code_hash: row.codeHash,
              key_id: row.keyId,
              single_use: dialect.bool(row.singleUse),
              expiration_time: row.expirationTime,
              create_time: row.createTime,
            })
            .execute(),
        { unique: () => alreadyExists("group_invite", row.uid, `invite ${row.uid} already exists`) },
      );
      ctx.changed("group_invites");
    },

    async delete(uid) {
      const result = await db.deleteFrom("group_invites").where("uid", "=", uid).executeTakeFirst();
      ctx.changed("group_invites");
      return result.numDeletedRows > 0n;
    },

    async deleteByGroup(groupUid) {
      const result = await db
        .deleteFrom("group_invites")
        .where("parent_uid", "=", groupUid)
        .executeTakeFirst();
      ctx.changed("group_invites");
      return Number(result.numDeletedRows);
    },
  };
}
