import { type SqlBool, sql } from "kysely";
import type { SigningKeyRow, SigningKeyStore } from "../auth-store.js";
import { readInt, readOptionalInt } from "./dialect.js";
import type { SqlContext } from "./sql-context.js";

/**
 * SigningKeyStore over `signing_keys`; see `SigningKeyStore` in auth-store.ts. `list` returns every
 * key oldest first (createTime, then kid); `insert` of an existing kid is a no-op (ON CONFLICT DO
 * NOTHING), so processes racing to create the first key never fail. `retireOthers` is one UPDATE,
 * so two rotations racing leave the newer key (createTime, then kid) unmarked.
 */
export function createSigningKeyStore(ctx: SqlContext): SigningKeyStore {
  const { db } = ctx;
  return {
    async list() {
      const rows = await db
        .selectFrom("signing_keys")
        .selectAll()
        .orderBy("create_time")
        .orderBy("kid")
        .execute();
      return rows.map((r) => {
        const row: SigningKeyRow = {
          kid: r.kid,
          privateJwk: r.private_jwk,
          publicJwk: r.public_jwk,
          createTime: readInt(r.create_time),
        };
        const retire = readOptionalInt(r.retire_time);
        if (retire !== undefined) row.retireTime = retire;
        return row;
      });
    },

    async insert(row) {
      await db
        .insertInto("signing_keys")
        .values({
          kid: row.kid,
          private_jwk: row.privateJwk,
          public_jwk: row.publicJwk,
          create_time: row.createTime,
          retire_time: row.retireTime ?? null,
        })
        .onConflict((oc) => oc.column("kid").doNothing())
        .execute();
      ctx.changed("signing_keys");
    },

    async retireOthers(kid, createTime, retireTime) {
      const result = await db
        .updateTable("signing_keys")
        .set({ retire_time: retireTime })
        .where("retire_time", "is", null)
        .where(sql<SqlBool>`(create_time < ${createTime} or (create_time = ${createTime} and kid < ${kid}))`)
        .executeTakeFirst();
      ctx.changed("signing_keys");
      return Number(result.numUpdatedRows);
    },
  };
}
