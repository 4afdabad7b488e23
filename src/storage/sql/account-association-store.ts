import type { Selectable } from "kysely";
import { alreadyExists } from "../../core/errors.js";
import type { AccountAssociationRow, AccountAssociationStore } from "../iam-store.js";
import { readInt } from "./dialect.js";
import { listWindow, STANDARD_SORT } from "./list-window.js";
import { commonPredicates, equalsIfSet } from "./predicates.js";
import type { AccountAssociationsTable } from "./schema.js";
import { guardWrite, parentColumn, type SqlContext } from "./sql-context.js";

const PROVIDERS = ["amazon", "google", "azure", "github"] as const;

function toAccountAssociationRow(r: Selectable<AccountAssociationsTable>): AccountAssociationRow {
  const row: AccountAssociationRow = {
    uid: r.uid,
    name: r.name,
    description: r.description,
    createTime: readInt(r.create_time),
    updateTime: readInt(r.update_time),
  };
  for (const provider of PROVIDERS) {
    const value = r[provider];
    if (value !== null) Object.assign(row, { [provider]: JSON.parse(value) });
  }
  return row;
}

function mutableColumns(row: AccountAssociationRow) {
  const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));
  return {
    name: row.name,
    description: row.description,
    amazon: json(row.amazon),
    google: json(row.google),
    azure: json(row.azure),
    github: json(row.github),
    update_time: row.updateTime,
  };
}

/**
 * AccountAssociationStore over `account_associations`: one row per group, whose uid is the group's
 * uid (so the uidp filters and scopes apply to the group); each provider block round-trips as JSON.
 */
export function createAccountAssociationStore(ctx: SqlContext): AccountAssociationStore {
  const { db } = ctx;
  return {
    async get(uid) {
      const r = await db
        .selectFrom("account_associations")
        .selectAll()
        .where("uid", "=", uid)
        .executeTakeFirst();
      return r && toAccountAssociationRow(r);
    },

    list(filter, window) {
      return listWindow(
        ctx,
        {
          table: "account_associations",
          from: db.selectFrom("account_associations"),
          where: (uid) => [...equalsIfSet("name", filter.name), ...commonPredicates(filter, uid)],
          sort: STANDARD_SORT,
          toRow: toAccountAssociationRow,
        },
        window,
      );
    },

    async insert(row) {
      await guardWrite(
        ctx,
        () =>
          db
            .insertInto("account_associations")
            .values({
              uid: row.uid,
              parent_uid: parentColumn(row.uid),
              create_time: row.createTime,
              ...mutableColumns(row),
            })
            .execute(),
        {
          unique: () =>
            alreadyExists(
              "account_association",
              row.uid,
              `group ${row.uid} already has an account association`,
            ),
        },
      );
      ctx.changed("account_associations");
    },

    async update(row) {
      const result = await db
        .updateTable("account_associations")
        .set(mutableColumns(row))
        .where("uid", "=", row.uid)
        .executeTakeFirst();
      ctx.changed("account_associations");
      return result.numUpdatedRows > 0n;
    },

    async delete(uid) {
      const result = await db.deleteFrom("account_associations").where("uid", "=", uid).executeTakeFirst();
      ctx.changed("account_associations");
      return result.numDeletedRows > 0n;
    },
  };
}
