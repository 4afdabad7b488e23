import { type RawBuilder, type SqlBool, sql } from "kysely";
import { parentOf } from "../../core/uidp.js";
import type { ImageHit, RepoHit, SearchStore, TagHit } from "../search-store.js";
import { readBool, readInt } from "./dialect.js";
import { likeContainingLower, likeLiteral } from "./like-pattern.js";
import { allOf, type Predicate, withinScopes } from "./predicates.js";
import type { SqlContext } from "./sql-context.js";
import { isReferrerTag } from "./tag-name-patterns.js";

/**
 * Every group's path (`acme/team`) from its organization down, as `group_paths(uid, path)`.
 * Computed for all groups: the groups table is small next to repos and tags, and a scope may be a
 * folder whose path still starts at its organization.
 */
const GROUP_PATHS = sql`with recursive group_paths(uid, path) as (
  select uid, name from groups where parent_uid = ''
  union all
  select g.uid, p.path || '/' || g.name from groups g inner join group_paths p on g.parent_uid = p.uid
)`;

const REPO_PATH = sql`(p.path || '/' || r.name)`;

interface RepoHitRecord {
  uid: string;
  name: string;
  description: string;
  create_time: bigint | number;
  update_time: bigint | number;
  repo_path: string;
}

interface TagHitRecord {
  uid: string;
  parent_uid: string;
  name: string;
  digest: string;
  deprecated: boolean | bigint | number;
  create_time: bigint | number;
  update_time: bigint | number;
  repo_path: string;
}

interface ImageHitRecord {
  digest: string;
  repo_uid: string;
  repo_path: string;
}

/**
 * SearchStore over `repos`, `tags` and `manifests` joined to the group paths. Substrings are
 * `lower(…) LIKE '%q%' escape '\'` (no index serves a leading wildcard: each kind scans the repos
 * in scope); a digest prefix is `digest LIKE 'sha256:abcd%'`. Orders use byte order on both
 * engines, so SQLite and PostgreSQL cut at the same rows.
 */
export function createSearchStore(ctx: SqlContext): SearchStore {
  const { db } = ctx;
  const byteOrder = (expr: RawBuilder<unknown>) =>
    ctx.dialect.name === "postgres" ? sql`${expr} collate "C"` : expr;
  const where = (predicates: Predicate[]) => allOf(predicates) ?? sql<SqlBool>`1 = 1`;

  return {
    async search(query) {
      const limit = Math.max(1, Math.trunc(query.limit));
      const inScope = withinScopes(query.within, sql<string>`r.uid`);
      const pattern = likeContainingLower(query.text);

      const repoRows = await sql<RepoHitRecord>`${GROUP_PATHS}
        select r.uid, r.name, r.description, r.create_time, r.update_time, ${REPO_PATH} as repo_path
        from repos r inner join group_paths p on p.uid = r.parent_uid
        where ${where([sql<SqlBool>`lower(${REPO_PATH}) like ${pattern} escape '\\'`, ...inScope])}
        order by ${byteOrder(REPO_PATH)}, r.uid
        limit ${limit + 1}`.execute(db);

      const tagRows = await sql<TagHitRecord>`${GROUP_PATHS}
        select t.uid, t.parent_uid, t.name, t.digest, t.deprecated, t.create_time, t.update_time,
          ${REPO_PATH} as repo_path
        from tags t inner join repos r on r.uid = t.parent_uid inner join group_paths p on p.uid = r.parent_uid
        where ${where([
          sql<SqlBool>`lower(t.name) like ${pattern} escape '\\'`,
          sql<SqlBool>`not ${isReferrerTag("t.name")}`,
          ...inScope,
        ])}
        order by ${byteOrder(REPO_PATH)}, ${byteOrder(sql`t.name`)}
        limit ${limit + 1}`.execute(db);

      let imageRows: ImageHitRecord[] = [];
      if (query.digestPrefix !== undefined) {
        const prefix = `${likeLiteral(query.digestPrefix.toLowerCase())}%`;
        imageRows = (
          await sql<ImageHitRecord>`${GROUP_PATHS}
          select m.digest, m.repo_uid, ${REPO_PATH} as repo_path
          from manifests m inner join repos r on r.uid = m.repo_uid inner join group_paths p on p.uid = r.parent_uid
          where ${where([sql<SqlBool>`m.digest like ${prefix} escape '\\'`, ...inScope])}
          order by ${byteOrder(sql`m.digest`)}, ${byteOrder(REPO_PATH)}
          limit ${limit + 1}`.execute(db)
        ).rows;
      }

      const repos: RepoHit[] = repoRows.rows.slice(0, limit).map((r) => ({
        repo: {
          uid: r.uid,
          groupUid: parentOf(r.uid),
          name: r.name,
          description: r.description,
          createTime: readInt(r.create_time),
          updateTime: readInt(r.update_time),
        },
        path: r.repo_path,
      }));
      const tags: TagHit[] = tagRows.rows.slice(0, limit).map((t) => ({
        tag: {
          uid: t.uid,
          repoUid: t.parent_uid,
          name: t.name,
          digest: t.digest,
          deprecated: readBool(t.deprecated),
          createTime: readInt(t.create_time),
          updateTime: readInt(t.update_time),
        },
        repoPath: t.repo_path,
      }));
      const images = await withTags(imageRows.slice(0, limit));
      return {
        repos,
        tags,
        images,
        truncated: repoRows.rows.length > limit || tagRows.rows.length > limit || imageRows.length > limit,
      };
    },
  };

  /** The hits with the names of their repos' tags pointing at each digest (one query). */
  async function withTags(rows: ImageHitRecord[]): Promise<ImageHit[]> {
    if (rows.length === 0) return [];
    const names = await db
      .selectFrom("tags")
      .select(["parent_uid", "digest", "name"])
      .where(
        "digest",
        "in",
        rows.map((r) => r.digest),
      )
      .where(
        "parent_uid",
        "in",
        rows.map((r) => r.repo_uid),
      )
      .execute();
    const key = (repoUid: string, digest: string) => `${repoUid} ${digest}`;
    const byImage = new Map<string, string[]>();
    for (const t of names) {
      const k = key(t.parent_uid, t.digest);
      byImage.set(k, [...(byImage.get(k) ?? []), t.name]);
    }
    return rows.map((r) => ({
      digest: r.digest,
      repoUid: r.repo_uid,
      repoPath: r.repo_path,
      tags: (byImage.get(key(r.repo_uid, r.digest)) ?? []).sort(),
    }));
  }
}
