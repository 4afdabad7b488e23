import type { Selectable } from "kysely";
import { alreadyExists } from "../../core/errors.js";
import type { UpstreamRow, UpstreamStore } from "../upstream-store.js";
import { readInt } from "./dialect.js";
import { listWindow, STANDARD_SORT } from "./list-window.js";
import { commonPredicates } from "./predicates.js";
import type { UpstreamsTable } from "./schema.js";
import { guardWrite, parentColumn, type SqlContext } from "./sql-context.js";

function toUpstreamRow(r: Selectable<UpstreamsTable>): UpstreamRow {
  return {
    uid: r.uid,
    orgUid: r.parent_uid,
    name: r.name,
    url: r.url,
    username: r.username,
    passwordSealed: r.password,
    tagTtlMs: readInt(r.tag_ttl_ms),
    createTime: readInt(r.create_time),
    updateTime: readInt(r.update_time),
  };
}

/** UpstreamStore over `upstreams` (migration 0021); see upstream-store.ts. */
export function createUpstreamStore(ctx: SqlContext): UpstreamStore {
  const { db } = ctx;
  const duplicate = (row: UpstreamRow) => () =>
    alreadyExists("upstream", row.name, `the organization already has an upstream named "${row.name}"`);
  return {
    async get(uid) {
      const row = await db.selectFrom("upstreams").selectAll().where("uid", "=", uid).executeTakeFirst();
      return row && toUpstreamRow(row);
    },

    async getByName(orgUid, name) {
      const row = await db
        .selectFrom("upstreams")
        .selectAll()
        .where("parent_uid", "=", orgUid)
        .where("name", "=", name)
        .executeTakeFirst();
      return row && toUpstreamRow(row);
    },

    list(filter, window) {
      return listWindow(
        ctx,
        {
          table: "upstreams",
          from: db.selectFrom("upstreams"),
          where: (uid) => commonPredicates(filter, uid),
          sort: STANDARD_SORT,
          toRow: toUpstreamRow,
        },
        window,
      );
    },

    async all() {
      const rows = await db
        .selectFrom("upstreams")
        .innerJoin("groups", "groups.uid", "upstreams.parent_uid")
        .selectAll("upstreams")
        .select("groups.name as org_name")
        .execute();
      return rows.map((r) => ({ ...toUpstreamRow(r), orgName: r.org_name }));
    },

    async insert(row) {
      await guardWrite(
        ctx,
        () =>
          db
            .insertInto("upstreams")
            .values({
              uid: row.uid,
              parent_uid: parentColumn(row.uid, row.orgUid),
              name: row.name,
              url: row.url,
              username: row.username,
              password: row.passwordSealed,
              tag_ttl_ms: row.tagTtlMs,
              create_time: row.createTime,
              update_time: row.updateTime,
            })
            .execute(),
        { unique: duplicate(row) },
      );
      ctx.changed("upstreams");
    },

    async update(row) {
      const result = await db
        .updateTable("upstreams")
        .set({
          url: row.url,
          username: row.username,
          password: row.passwordSealed,
          tag_ttl_ms: row.tagTtlMs,
          update_time: row.updateTime,
        })
        .where("uid", "=", row.uid)
        .executeTakeFirst();
      ctx.changed("upstreams");
      return result.numUpdatedRows > 0n;
    },

    async delete(uid) {
      const result = await db.deleteFrom("upstreams").where("uid", "=", uid).executeTakeFirst();
      ctx.changed("upstreams");
      return result.numDeletedRows > 0n;
    },
  };
}
