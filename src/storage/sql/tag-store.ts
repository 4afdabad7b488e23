import { type Selectable, type SqlBool, sql } from "kysely";
import { alreadyExists, notFound } from "../../core/errors.js";
import type { TagRow, TagStore } from "../registry-store.js";
import { readBool, readInt } from "./dialect.js";
import { listWindow, STANDARD_SORT } from "./list-window.js";
import { commonPredicates, equalsIfSet } from "./predicates.js";
import type { TagsTable } from "./schema.js";
import { guardWrite, parentColumn, precompiled, type SqlContext } from "./sql-context.js";
import { endsWithDateStamp, endsWithEpoch, isReferrerTag } from "./tag-name-patterns.js";

/** A `tags` row as a TagRow. */
export function toTagRow(r: Selectable<TagsTable>): TagRow {
  return {
    uid: r.uid,
    repoUid: r.parent_uid,
    name: r.name,
    digest: r.digest,
    deprecated: readBool(r.deprecated),
    createTime: readInt(r.create_time),
    updateTime: readInt(r.update_time),
  };
}

const selectByUid = precompiled((db) => db.selectFrom("tags").selectAll().where("uid", "=", ""));
// A manifest GET by tag runs this on every request.
const selectByName = precompiled((db) =>
  db.selectFrom("tags").selectAll().where("parent_uid", "=", "").where("name", "=", ""),
);

/** How often `put` retries when a concurrent delete removes the tag between its insert and its read. */
const PUT_ATTEMPTS = 3;

/**
 * TagStore over `tags` (parent_uid is the repo) and the append-only `tag_history`; see `TagStore`
 * in registry-store.ts.
 *
 * `put` is safe against concurrent puts of the same tag on both engines: it inserts with ON CONFLICT
 * DO NOTHING, and otherwise locks the existing row (FOR UPDATE on PostgreSQL; SQLite transactions
 * hold the write lock from BEGIN IMMEDIATE) before comparing digests. It bumps updateTime when the
 * digest or `deprecated` changes, and appends history only when the digest changes. A repo that
 * does not exist is NOT_FOUND. `delete` removes the tag and appends an empty-digest history row;
 * history is keyed by repo and tag name and goes only with the repo.
 */
export function createTagStore(ctx: SqlContext): TagStore {
  const { db } = ctx;
  return {
    async get(uid) {
      const [r] = await selectByUid(ctx, [uid]);
      return r && toTagRow(r);
    },

    async getByName(repoUid, name) {
      const [r] = await selectByName(ctx, [repoUid, name]);
      return r && toTagRow(r);
    },

    async ofDigest(repoUid, digest) {
      const rows = await db
        .selectFrom("tags")
        .selectAll()
        .where("digest", "=", digest)
        .where("parent_uid", "=", repoUid)
        .orderBy("name")
        .execute();
      return rows.map(toTagRow);
    },

    list(filter, window) {
      return listWindow(
        ctx,
        {
          table: "tags",
          from: db.selectFrom("tags"),
          where: (uid) => [
            ...equalsIfSet("name", filter.name),
            ...equalsIfSet("digest", filter.digest),
            ...(filter.updatedSince === undefined
              ? []
              : [sql<SqlBool>`update_time >= ${filter.updatedSince}`]),
            ...(filter.hideReferrers ? [sql<SqlBool>`not ${isReferrerTag()}`] : []),
            ...(filter.hideDates ? [sql<SqlBool>`not ${endsWithDateStamp()}`] : []),
            ...(filter.hideEpochs ? [sql<SqlBool>`not ${endsWithEpoch()}`] : []),
            ...commonPredicates(filter, uid),
          ],
          sort: STANDARD_SORT,
          toRow: toTagRow,
        },
        window,
      );
    },

    put(args) {
      parentColumn(args.newUid, args.repoUid);
      return ctx.transaction(async (tx) => {
        const appendHistory = () =>
          tx.db
            .insertInto("tag_history")
            .values({
              repo_uid: args.repoUid,
              tag_name: args.name,
              digest: args.digest,
              update_time: args.now,
            })
            .execute();

        for (let attempt = 0; attempt < PUT_ATTEMPTS; attempt++) {
          const inserted = await guardWrite(
            tx,
            () =>
              tx.db
                .insertInto("tags")
                .values({
                  uid: args.newUid,
                  parent_uid: args.repoUid,
                  name: args.name,
                  digest: args.digest,
                  deprecated: tx.dialect.bool(args.deprecated),
                  create_time: args.now,
                  update_time: args.now,
                })
                .onConflict((oc) => oc.columns(["parent_uid", "name"]).doNothing())
                .returningAll()
                .executeTakeFirst(),
            {
              unique: () => alreadyExists("tag", args.newUid, `tag uid ${args.newUid} is already taken`),
              foreignKey: () => notFound("repo", args.repoUid),
            },
          );
          if (inserted !== undefined) {
            tx.changed("tags");
            await appendHistory();
            return toTagRow(inserted);
          }

          let select = tx.db
            .selectFrom("tags")
            .selectAll()
            .where("parent_uid", "=", args.repoUid)
            .where("name", "=", args.name);
          if (tx.dialect.rowLocks) select = select.forUpdate();
          const current = await select.executeTakeFirst();
          if (current === undefined) continue;

          const tag = toTagRow(current);
          const moved = tag.digest !== args.digest;
          if (moved) await args.beforeMove?.(tag);
          if (!moved && tag.deprecated === args.deprecated) return tag;
          await tx.db
            .updateTable("tags")
            .set({ digest: args.digest, deprecated: tx.dialect.bool(args.deprecated), update_time: args.now })
            .where("uid", "=", tag.uid)
            .execute();
          tx.changed("tags");
          if (moved) await appendHistory();
          return { ...tag, digest: args.digest, deprecated: args.deprecated, updateTime: args.now };
        }
        throw new Error(`tag ${args.name} of repo ${args.repoUid} kept disappearing during put`);
      });
    },

    delete(uid, now) {
      return ctx.transaction(async (tx) => {
        const deleted = await tx.db
          .deleteFrom("tags")
          .where("uid", "=", uid)
          .returning(["parent_uid", "name"])
          .executeTakeFirst();
        if (deleted === undefined) return false;
        tx.changed("tags");
        await tx.db
          .insertInto("tag_history")
          .values({
            repo_uid: deleted.parent_uid,
            tag_name: deleted.name,
            digest: "",
            update_time: now,
            tag_uid: uid,
          })
          .execute();
        return true;
      });
    },

    async deletedTag(uid) {
      const row = await db
        .selectFrom("tag_history")
        .select(["repo_uid", "tag_name"])
        .where("tag_uid", "=", uid)
        .orderBy("id", "desc")
        .limit(1)
        .executeTakeFirst();
      return row && { repoUid: row.repo_uid, name: row.tag_name };
    },

    async historyAt(repoUid, tagName, time) {
      const r = await db
        .selectFrom("tag_history")
        .select(["repo_uid", "tag_name", "digest", "update_time"])
        .where("repo_uid", "=", repoUid)
        .where("tag_name", "=", tagName)
        .where(sql<SqlBool>`update_time <= ${time}`)
        .orderBy("update_time", "desc")
        .orderBy("id", "desc")
        .limit(1)
        .executeTakeFirst();
      return (
        r && {
          repoUid: r.repo_uid,
          tagName: r.tag_name,
          digest: r.digest,
          updateTime: readInt(r.update_time),
        }
      );
    },

    async names(repoUid, { after, limit }) {
      let q = db.selectFrom("tags").select("name").where("parent_uid", "=", repoUid);
      if (after !== undefined) q = q.where("name", ">", after);
      const rows = await q.orderBy("name").limit(limit).execute();
      return rows.map((r) => r.name);
    },

    async pointedTo(repoUid, tagNames, digest) {
      if (tagNames.length === 0) return false;
      const row = await db
        .selectFrom("tag_history")
        .select("id")
        .where("repo_uid", "=", repoUid)
        .where("digest", "=", digest)
        .where("tag_name", "in", [...tagNames])
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },

    async history(args) {
      let q = db
        .selectFrom("tag_history")
        .select(["repo_uid", "tag_name", "digest", "update_time"])
        .where("repo_uid", "=", args.repoUid)
        .where("tag_name", "=", args.tagName);
      if (args.start !== undefined) q = q.where(sql<SqlBool>`update_time >= ${args.start}`);
      if (args.end !== undefined) q = q.where(sql<SqlBool>`update_time < ${args.end}`);
      const rows = await q.orderBy("update_time").orderBy("id").limit(args.limit).execute();
      return rows.map((r) => ({
        repoUid: r.repo_uid,
        tagName: r.tag_name,
        digest: r.digest,
        updateTime: readInt(r.update_time),
      }));
    },
  };
}
