import type { Selectable } from "kysely";
import type { TermsAcceptanceRow, TermsAcceptanceStore } from "../iam-store.js";
import { readInt } from "./dialect.js";
import { listWindow, type SortColumns, STANDARD_SORT } from "./list-window.js";
import { commonPredicates, isIn } from "./predicates.js";
import type { TermsAcceptancesTable } from "./schema.js";
import { parentColumn, type SqlContext } from "./sql-context.js";

/** Acceptances are never updated: update_time orders like create_time. */
const ACCEPTANCE_SORT: SortColumns = {
  uid: STANDARD_SORT.uid,
  create_time: STANDARD_SORT.create_time,
  update_time: STANDARD_SORT.create_time,
};

function toAcceptanceRow(r: Selectable<TermsAcceptancesTable>): TermsAcceptanceRow {
  return {
    uid: r.uid,
    groupUid: r.parent_uid,
    docId: r.doc_id,
    acceptedBy: r.accepted_by,
    createTime: readInt(r.create_time),
  };
}

/**
 * TermsAcceptanceStore over `terms_acceptances` (parent_uid is the group, unique per document).
 * `accept` is an insert that does nothing when the group already accepted the document, so
 * concurrent accepts of the same document leave one row.
 */
export function createTermsAcceptanceStore(ctx: SqlContext): TermsAcceptanceStore {
  const { db } = ctx;
  return {
    async accept(row) {
      const result = await db
        .insertInto("terms_acceptances")
        .values({
          uid: row.uid,
          parent_uid: parentColumn(row.uid, row.groupUid),
          doc_id: row.docId,
          accepted_by: row.acceptedBy,
          create_time: row.createTime,
        })
        .onConflict((oc) => oc.columns(["parent_uid", "doc_id"]).doNothing())
        .executeTakeFirst();
      ctx.changed("terms_acceptances");
      return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    },

    list(filter, window) {
      return listWindow(
        ctx,
        {
          table: "terms_acceptances",
          from: db.selectFrom("terms_acceptances"),
          where: (uid) => [
            ...(filter.groupUids === undefined ? [] : [isIn(filter.groupUids, "parent_uid")]),
            ...commonPredicates(filter, uid),
          ],
          sort: ACCEPTANCE_SORT,
          toRow: toAcceptanceRow,
        },
        window,
      );
    },

    async deleteByGroup(groupUid) {
      const result = await db
        .deleteFrom("terms_acceptances")
        .where("parent_uid", "=", groupUid)
        .executeTakeFirst();
      ctx.changed("terms_acceptances");
      return Number(result.numDeletedRows);
    },
  };
}
