import type { Selectable } from "kysely";
import { alreadyExists } from "../../core/errors.js";
import type { TrustedKeyRow, TrustedKeyStore } from "../trusted-key-store.js";
import { readInt } from "./dialect.js";
import { listWindow, type SortColumns, STANDARD_SORT } from "./list-window.js";
import { commonPredicates } from "./predicates.js";
import type { TrustedKeysTable } from "./schema.js";
import { guardWrite, parentColumn, type SqlContext } from "./sql-context.js";

/** Keys are never updated: by uid, name or create time. */
const KEY_SORT: SortColumns = {
  uid: STANDARD_SORT.uid,
  name: STANDARD_SORT.name,
  create_time: STANDARD_SORT.create_time,
};

function toKeyRow(r: Selectable<TrustedKeysTable>): TrustedKeyRow {
  return {
    uid: r.uid,
    parentUid: r.parent_uid,
    name: r.name,
    publicKeyPem: r.public_key_pem,
    algorithm: r.algorithm,
    fingerprint: r.fingerprint,
    createTime: readInt(r.create_time),
  };
}

/** TrustedKeyStore over `trusted_keys` (migration 0023); see trusted-key-store.ts. */
export function createTrustedKeyStore(ctx: SqlContext): TrustedKeyStore {
  const { db } = ctx;
  const duplicate = (row: TrustedKeyRow) => () =>
    alreadyExists("signing key", row.name, `the parent already has a signing key named "${row.name}"`);
  return {
    async get(uid) {
      const row = await db.selectFrom("trusted_keys").selectAll().where("uid", "=", uid).executeTakeFirst();
      return row && toKeyRow(row);
    },

    list(filter, window) {
      return listWindow(
        ctx,
        {
          table: "trusted_keys",
          from: db.selectFrom("trusted_keys"),
          where: (uid) => commonPredicates(filter, uid),
          sort: KEY_SORT,
          toRow: toKeyRow,
        },
        window,
      );
    },

    async ofParents(parentUids) {
      if (parentUids.length === 0) return [];
      const rows = await db
        .selectFrom("trusted_keys")
        .selectAll()
        .where("parent_uid", "in", [...parentUids])
        .execute();
      return rows
        .map(toKeyRow)
        .sort(
          (a, b) =>
            b.parentUid.length - a.parentUid.length ||
            a.createTime - b.createTime ||
            (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0),
        );
    },

    async insert(row) {
      await guardWrite(
        ctx,
        () =>
          db
            .insertInto("trusted_keys")
            .values({
              uid: row.uid,
              parent_uid: parentColumn(row.uid, row.parentUid),
              name: row.name,
              public_key_pem: row.publicKeyPem,
              algorithm: row.algorithm,
              fingerprint: row.fingerprint,
              create_time: row.createTime,
            })
            .execute(),
        { unique: duplicate(row) },
      );
      ctx.changed("trusted_keys");
    },

    async delete(uid) {
      const result = await db.deleteFrom("trusted_keys").where("uid", "=", uid).executeTakeFirst();
      ctx.changed("trusted_keys");
      return result.numDeletedRows > 0n;
    },
  };
}
