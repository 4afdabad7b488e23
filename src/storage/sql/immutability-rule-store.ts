import type { Selectable } from "kysely";
import type { ImmutabilityRuleRow, ImmutabilityRuleStore } from "../immutability-store.js";
import { readInt } from "./dialect.js";
import { listWindow, TIME_SORT } from "./list-window.js";
import { commonPredicates } from "./predicates.js";
import type { ImmutabilityRulesTable } from "./schema.js";
import { parentColumn, type SqlContext } from "./sql-context.js";

function toRuleRow(r: Selectable<ImmutabilityRulesTable>): ImmutabilityRuleRow {
  return {
    uid: r.uid,
    parentUid: r.parent_uid,
    tagPatterns: JSON.parse(r.tag_patterns) as string[],
    description: r.description,
    createTime: readInt(r.create_time),
    updateTime: readInt(r.update_time),
  };
}

/** ImmutabilityRuleStore over `immutability_rules` (migration 0016); see immutability-store.ts. */
export function createImmutabilityRuleStore(ctx: SqlContext): ImmutabilityRuleStore {
  const { db } = ctx;
  return {
    async get(uid) {
      const row = await db
        .selectFrom("immutability_rules")
        .selectAll()
        .where("uid", "=", uid)
        .executeTakeFirst();
      return row && toRuleRow(row);
    },

    list(filter, window) {
      return listWindow(
        ctx,
        {
          table: "immutability_rules",
          from: db.selectFrom("immutability_rules"),
          where: (uid) => commonPredicates(filter, uid),
          sort: TIME_SORT,
          toRow: toRuleRow,
        },
        window,
      );
    },

    async ofParents(parentUids) {
      if (parentUids.length === 0) return [];
      const rows = await db
        .selectFrom("immutability_rules")
        .selectAll()
        .where("parent_uid", "in", [...parentUids])
        .execute();
      return rows
        .map(toRuleRow)
        .sort(
          (a, b) =>
            b.parentUid.length - a.parentUid.length ||
            a.createTime - b.createTime ||
            (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0),
        );
    },

    async insert(row) {
      await db
        .insertInto("immutability_rules")
        .values({
          uid: row.uid,
          parent_uid: parentColumn(row.uid, row.parentUid),
          tag_patterns: JSON.stringify(row.tagPatterns),
          description: row.description,
          create_time: row.createTime,
          update_time: row.updateTime,
        })
        .execute();
      ctx.changed("immutability_rules");
    },

    async update(row) {
      const result = await db
        .updateTable("immutability_rules")
        .set({
          tag_patterns: JSON.stringify(row.tagPatterns),
          description: row.description,
          update_time: row.updateTime,
        })
        .where("uid", "=", row.uid)
        .executeTakeFirst();
      ctx.changed("immutability_rules");
      return result.numUpdatedRows > 0n;
    },

    async delete(uid) {
      const result = await db.deleteFrom("immutability_rules").where("uid", "=", uid).executeTakeFirst();
      ctx.changed("immutability_rules");
      return result.numDeletedRows > 0n;
    },
  };
}
