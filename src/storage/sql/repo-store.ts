import type { Selectable } from "kysely";
import { alreadyExists } from "../../core/errors.js";
import { parentOf } from "../../core/uidp.js";
import type { RepoListRow, RepoRow, RepoStore } from "../registry-store.js";
import { readInt } from "./dialect.js";
import { listWindow, STANDARD_SORT } from "./list-window.js";
import { commonPredicates, equalsIfSet, isIn } from "./predicates.js";
import type { ReposTable } from "./schema.js";
import { guardWrite, parentColumn, precompiled, type SqlContext } from "./sql-context.js";
import { countRemoved, referencesHeld } from "./usage-accounting.js";

function toRepoRow(r: Selectable<ReposTable>): RepoRow {
  return {
    uid: r.uid,
    groupUid: r.parent_uid,
    name: r.name,
    description: r.description,
    readme: r.readme,
    createTime: readInt(r.create_time),
    updateTime: readInt(r.update_time),
  };
}

/** What a list page selects: every column of the covering index `repos_list_uid_idx` (migration 0003) but parent_uid, which is the parent of uid. */
const LIST_COLUMNS = ["uid", "name", "description", "create_time", "update_time"] as const;

function toRepoListRow(r: Pick<Selectable<ReposTable>, (typeof LIST_COLUMNS)[number]>): RepoListRow {
  return {
    uid: r.uid,
    groupUid: parentOf(r.uid),
    name: r.name,
    description: r.description,
    createTime: readInt(r.create_time),
    updateTime: readInt(r.update_time),
  };
}

const selectByUid = precompiled((db) => db.selectFrom("repos").selectAll().where("uid", "=", ""));

/**
 * RepoStore over `repos` (parent_uid is the group); see `RepoStore` in registry-store.ts. `delete`
 * removes the repo's tags and tag history through ON DELETE CASCADE foreign keys, in the same
 * statement. `groupUid` must be the parent of `uid`; `update` never moves a repo nor changes
 * createTime.
 */
export function createRepoStore(ctx: SqlContext): RepoStore {
  const { db } = ctx;
  const duplicate = (row: RepoRow) => () =>
    alreadyExists("repo", row.name, `a repo named "${row.name}" already exists in group ${row.groupUid}`);

  return {
    async get(uid) {
      const [r] = await selectByUid(ctx, [uid]);
      return r && toRepoRow(r);
    },

    async getByName(groupUid, name) {
      const r = await db
        .selectFrom("repos")
        .selectAll()
        .where("parent_uid", "=", groupUid)
        .where("name", "=", name)
        .executeTakeFirst();
      return r && toRepoRow(r);
    },

    list(filter, window) {
      return listWindow(
        ctx,
        {
          table: "repos",
          from: db.selectFrom("repos"),
          where: (uid) => [...equalsIfSet("name", filter.name), ...commonPredicates(filter, uid)],
          sort: STANDARD_SORT,
          columns: LIST_COLUMNS,
          toRow: toRepoListRow,
        },
        window,
      );
    },

    async readmes(uids) {
      if (uids.length === 0) return new Map();
      const rows = await db.selectFrom("repos").select(["uid", "readme"]).where(isIn(uids)).execute();
      return new Map(rows.map((r) => [r.uid, r.readme]));
    },

    async insert(row) {
      await guardWrite(
        ctx,
        () =>
          db
            .insertInto("repos")
            .values({
              uid: row.uid,
              parent_uid: parentColumn(row.uid, row.groupUid),
              name: row.name,
              description: row.description,
              readme: row.readme,
              create_time: row.createTime,
              update_time: row.updateTime,
            })
            .execute(),
        { unique: duplicate(row) },
      );
      ctx.changed("repos");
    },

    async update(row) {
      parentColumn(row.uid, row.groupUid);
      const result = await guardWrite(
        ctx,
        () =>
          db
            .updateTable("repos")
            .set({
              name: row.name,
              description: row.description,
              readme: row.readme,
              update_time: row.updateTime,
            })
            .where("uid", "=", row.uid)
            .executeTakeFirst(),
        { unique: duplicate(row) },
      );
      ctx.changed("repos");
      return result.numUpdatedRows > 0n;
    },

    delete(uid) {
      return ctx.transaction(async (tx) => {
        // The cascade takes the repo's manifests: what they held stops counting in its organization.
        const held = await referencesHeld(tx, uid);
        const result = await tx.db.deleteFrom("repos").where("uid", "=", uid).executeTakeFirst();
        // Rules have no foreign key (their parent is a group or a repo): they go with their parent.
        await tx.db.deleteFrom("immutability_rules").where("parent_uid", "=", uid).execute();
        await tx.db.deleteFrom("trusted_keys").where("parent_uid", "=", uid).execute();
        tx.changed("repos", "tags", "tag_history", "immutability_rules", "trusted_keys");
        if (result.numDeletedRows === 0n) return false;
        await countRemoved(tx, uid, held);
        return true;
      });
    },
  };
}
