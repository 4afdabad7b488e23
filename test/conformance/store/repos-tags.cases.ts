import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { newChildUid } from "../../../src/core/uidp.js";
import type { RepoRow } from "../../../src/storage/registry-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import {
  assertAlreadyExists,
  assertDomainError,
  firstPage,
  groupRow,
  repoRow,
  sortedUids,
  T0,
} from "./fixtures.js";

const digest = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;

/** RepoStore and TagStore: CRUD, uniqueness, tag moves and history, filters, delete cascade. */
export function repoTagCases(db: TestDatabase): void {
  describe("repos and tags", () => {
    let store: Store;
    let group: string;
    const put = (repo: RepoRow, name: string, d: number, now: number, deprecated = false) =>
      store.tags.put({
        repoUid: repo.uid,
        name,
        digest: digest(d),
        deprecated,
        newUid: newChildUid(repo.uid),
        now,
      });
    const newRepo = async (name: string) => {
      const repo = repoRow(group, name);
      await store.repos.insert(repo);
      return repo;
    };

    before(async () => {
      store = await db.openFresh();
      const g = groupRow("", "registry-org");
      await store.groups.insert(g);
      group = g.uid;
    });

    it("inserts, reads, updates and deletes a repo", async () => {
      const repo = await newRepo("app");
      assert.deepEqual(await store.repos.get(repo.uid), repo);
      assert.deepEqual(await store.repos.getByName(group, "app"), repo);
      const changed = {
        ...repo,
        name: "app2",
        description: "d",
        readme: "r",
        createTime: T0 + 7,
        updateTime: T0 + 8,
      };
      assert.equal(await store.repos.update(changed), true);
      assert.deepEqual(await store.repos.get(repo.uid), { ...changed, createTime: T0 });
      assert.equal(await store.repos.getByName(group, "app"), undefined);
      assert.equal(await store.repos.update(repoRow(group, "ghost")), false);
      assert.equal(await store.repos.delete(repo.uid), true);
      assert.equal(await store.repos.get(repo.uid), undefined);
      assert.equal(await store.repos.delete(repo.uid), false);
    });

    it("lists a repo as stored but without its readme, in every order", async () => {
      const sub = groupRow(group, "listed-sub");
      await store.groups.insert(sub);
      const repo = { ...repoRow(sub.uid, "listed"), description: "listed repo", updateTime: T0 + 5 };
      await store.repos.insert(repo);
      const { readme: _readme, ...expected } = repo;
      for (const field of ["uid", "name", "create_time", "update_time"] as const) {
        for (const desc of [false, true]) {
          const window = { ...firstPage(), order: { field, desc } };
          const slice = await store.repos.list({ uidp: { childrenOf: sub.uid } }, window);
          assert.deepEqual(slice.rows, [expected], `ordered by ${field}${desc ? " desc" : ""}`);
        }
      }
      const scoped = await store.repos.list({ within: { all: false, uids: [sub.uid] } }, firstPage());
      assert.deepEqual(scoped.rows, [expected], "within a subtree");
    });

    it("reads the readmes of many repos at once, by uid, leaving out uids that are no repo", async () => {
      const withReadme = await newRepo("readme-a");
      const empty = { ...repoRow(group, "readme-empty"), readme: "" };
      await store.repos.insert(empty);
      const ghost = newChildUid(group);
      const readmes = await store.repos.readmes([withReadme.uid, empty.uid, ghost]);
      assert.deepEqual(
        readmes,
        new Map([
          [withReadme.uid, "# readme-a"],
          [empty.uid, ""],
        ]),
      );
      assert.deepEqual(await store.repos.readmes([]), new Map());
    });

    it("rejects a second repo of the same name in a group as ALREADY_EXISTS", async () => {
      const repo = await newRepo("twin");
      await assertAlreadyExists(store.repos.insert(repoRow(group, "twin")));
      const sub = groupRow(group, "sub");
      await store.groups.insert(sub);
      await store.repos.insert(repoRow(sub.uid, "twin"));
      const other = await newRepo("twin-2");
      await assertAlreadyExists(store.repos.update({ ...other, name: repo.name }));
    });

    it("creates a tag with a history row; an unchanged digest appends nothing", async () => {
      const repo = await newRepo("tagged");
      const created = await put(repo, "latest", 1, T0 + 10);
      assert.equal(created.repoUid, repo.uid);
      assert.equal(created.digest, digest(1));
      assert.equal(created.createTime, T0 + 10);
      assert.equal(created.updateTime, T0 + 10);
      assert.deepEqual(await store.tags.get(created.uid), created);
      assert.deepEqual(await store.tags.getByName(repo.uid, "latest"), created);

      const again = await put(repo, "latest", 1, T0 + 20);
      assert.deepEqual(again, created, "same digest: the stored tag is returned unchanged");
      assert.deepEqual(await store.tags.get(created.uid), created);
      assert.deepEqual(await store.tags.history({ repoUid: repo.uid, tagName: "latest", limit: 10 }), [
        { repoUid: repo.uid, tagName: "latest", digest: digest(1), updateTime: T0 + 10 },
      ]);
    });

    it("moves a tag: keeps its uid, bumps updateTime, appends history oldest first", async () => {
      const repo = await newRepo("moving");
      const first = await put(repo, "v1", 1, T0 + 1);
      const moved = await put(repo, "v1", 2, T0 + 2);
      assert.equal(moved.uid, first.uid);
      assert.equal(moved.digest, digest(2));
      assert.equal(moved.createTime, T0 + 1);
      assert.equal(moved.updateTime, T0 + 2);
      assert.deepEqual(await store.tags.get(first.uid), moved);
      await put(repo, "v1", 1, T0 + 3);
      await put(repo, "v1", 1, T0 + 4); // unchanged
      await put(repo, "other", 9, T0 + 5); // another tag's history
      const history = await store.tags.history({ repoUid: repo.uid, tagName: "v1", limit: 100 });
      assert.deepEqual(
        history.map((h) => [h.digest, h.updateTime]),
        [
          [digest(1), T0 + 1],
          [digest(2), T0 + 2],
          [digest(1), T0 + 3],
        ],
      );
    });

    it("deprecating without a move updates the tag but appends no history", async () => {
      const repo = await newRepo("deprecating");
      await put(repo, "old", 1, T0 + 1);
      const deprecated = await put(repo, "old", 1, T0 + 2, true);
      assert.equal(deprecated.deprecated, true);
      assert.equal(deprecated.updateTime, T0 + 2);
      assert.equal((await store.tags.getByName(repo.uid, "old"))?.deprecated, true);
      assert.equal((await store.tags.history({ repoUid: repo.uid, tagName: "old", limit: 10 })).length, 1);
    });

    it("history honours [start, end), limit, and insertion order for equal times", async () => {
      const repo = await newRepo("history");
      const times = [100, 200, 200, 300, 400];
      for (const [i, t] of times.entries()) await put(repo, "h", i + 1, T0 + t);
      const h = (start?: number, end?: number, limit = 100) =>
        store.tags
          .history({
            repoUid: repo.uid,
            tagName: "h",
            limit,
            ...(start === undefined ? {} : { start: T0 + start }),
            ...(end === undefined ? {} : { end: T0 + end }),
          })
          .then((rows) => rows.map((r) => r.digest));
      assert.deepEqual(await h(), [1, 2, 3, 4, 5].map(digest));
      assert.deepEqual(await h(200, 400), [2, 3, 4].map(digest), "start inclusive, end exclusive");
      assert.deepEqual(await h(201), [4, 5].map(digest));
      assert.deepEqual(await h(undefined, 200), [digest(1)]);
      assert.deepEqual(await h(undefined, undefined, 2), [1, 2].map(digest), "limit keeps the oldest");
      assert.deepEqual(await h(200, undefined, 1), [digest(2)]);
      assert.deepEqual(await h(500), []);
    });

    it("concurrent puts of one tag: one row, and history records only real moves", async () => {
      const repo = await newRepo("racing");
      const race = (digests: number[]) =>
        // One handle: on PostgreSQL its pool runs the puts on separate connections at once; SQLite
        // serializes them on its single connection. One instant, so history order is lock order.
        Promise.all(digests.map((d) => put(repo, "hot", d, T0)));

      const created = await race([1, 1, 1, 1, 1, 1]);
      assert.equal(new Set(created.map((r) => r.uid)).size, 1, "racing creators make one tag");
      const moved = await race([2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3]);
      assert.equal(new Set(moved.map((r) => r.uid)).size, 1);

      const tags = await store.tags.list({ uidp: { childrenOf: repo.uid } }, firstPage());
      assert.equal(tags.total, 1n);
      const history = (await store.tags.history({ repoUid: repo.uid, tagName: "hot", limit: 100 })).map(
        (h) => h.digest,
      );
      assert.equal(history[0], digest(1), "one creation entry");
      for (let i = 1; i < history.length; i++) {
        assert.notEqual(history[i], history[i - 1], `entry ${i} repeats the digest before it: not a move`);
      }
      assert.equal(history.at(-1), tags.rows[0]?.digest, "the last entry is where the tag points");
    });

    it("filters tags by name, digest and updatedSince", async () => {
      const repo = await newRepo("filtered");
      const a = await put(repo, "a", 1, T0 + 10);
      const b = await put(repo, "b", 1, T0 + 20);
      const c = await put(repo, "c", 2, T0 + 30);
      const scope = { uidp: { childrenOf: repo.uid } };
      const uidsOf = async (f: object) =>
        sortedUids((await store.tags.list({ ...scope, ...f }, firstPage())).rows);
      assert.deepEqual(await uidsOf({ digest: digest(1) }), sortedUids([a, b]));
      assert.deepEqual(await uidsOf({ name: "c" }), [c.uid]);
      assert.deepEqual(await uidsOf({ updatedSince: T0 + 20 }), sortedUids([b, c]));
      assert.deepEqual(await uidsOf({ updatedSince: T0 + 20, digest: digest(1) }), [b.uid]);
    });

    it("hides referrer, date-stamped and epoch tags when asked to", async () => {
      const repo = await newRepo("tag-kinds");
      const hex = "ab".repeat(32);
      const names = [
        "latest",
        `sha256-${hex}.sig`,
        `sha256-${hex}`,
        "sha256-short.sig",
        `sha256-${"AB".repeat(32)}.sig`,
        "3.12-20250101",
        "3.12-2025010",
        "1.2.3-r4",
        "1.2.3-r",
        "v-r10",
      ];
      for (const [i, name] of names.entries()) await put(repo, name, 1, T0 + i);
      const scope = { uidp: { childrenOf: repo.uid } };
      const namesOf = async (f: object) => {
        const slice = await store.tags.list({ ...scope, ...f }, firstPage());
        assert.equal(Number(slice.total), slice.rows.length, "the total counts only what is listed");
        return slice.rows.map((r) => r.name).sort();
      };
      const all = [...names].sort();
      const without = (...gone: string[]) => all.filter((n) => !gone.includes(n));
      assert.deepEqual(await namesOf({}), all);
      assert.deepEqual(await namesOf({ hideReferrers: true }), without(`sha256-${hex}.sig`, `sha256-${hex}`));
      assert.deepEqual(await namesOf({ hideDates: true }), without("3.12-20250101"));
      assert.deepEqual(await namesOf({ hideEpochs: true }), without("1.2.3-r4", "v-r10"));
      assert.deepEqual(
        await namesOf({ hideReferrers: true, hideDates: true, hideEpochs: true }),
        without(`sha256-${hex}.sig`, `sha256-${hex}`, "3.12-20250101", "1.2.3-r4", "v-r10"),
      );
    });

    it("deleting a tag keeps its history and records the delete as an empty digest", async () => {
      const repo = await newRepo("tag-delete");
      const tag = await put(repo, "gone", 1, T0);
      assert.equal(await store.tags.delete(tag.uid, T0 + 5), true);
      assert.equal(await store.tags.get(tag.uid), undefined);
      assert.equal(await store.tags.delete(tag.uid, T0 + 6), false);
      await put(repo, "gone", 1, T0 + 7);
      const history = await store.tags.history({ repoUid: repo.uid, tagName: "gone", limit: 10 });
      assert.deepEqual(
        history.map((h) => [h.digest, h.updateTime]),
        [
          [digest(1), T0],
          ["", T0 + 5],
          [digest(1), T0 + 7],
        ],
      );
    });

    it("tells whether some of a set of tags ever pointed to a digest", async () => {
      const repo = await newRepo("pointed-to");
      const other = await newRepo("pointed-to-other");
      await put(repo, "latest", 1, T0);
      await put(repo, "latest", 2, T0 + 1);
      await put(repo, "old", 3, T0);
      await put(other, "latest", 4, T0);
      assert.equal(await store.tags.pointedTo(repo.uid, ["latest", "dev"], digest(1)), true, "a past digest");
      assert.equal(await store.tags.pointedTo(repo.uid, ["latest"], digest(2)), true, "the current digest");
      assert.equal(
        await store.tags.pointedTo(repo.uid, ["latest"], digest(3)),
        false,
        "another tag's digest",
      );
      assert.equal(
        await store.tags.pointedTo(repo.uid, ["latest"], digest(4)),
        false,
        "another repo's digest",
      );
      assert.equal(await store.tags.pointedTo(repo.uid, [], digest(1)), false, "no tags");
    });

    it("lists tag names in byte order after a marker, up to a limit", async () => {
      const repo = await newRepo("tag-names");
      for (const name of ["b", "a", "B", "c-1", "c"]) await put(repo, name, 1, T0);
      assert.deepEqual(await store.tags.names(repo.uid, { limit: 10 }), ["B", "a", "b", "c", "c-1"]);
      assert.deepEqual(await store.tags.names(repo.uid, { after: "a", limit: 2 }), ["b", "c"]);
      assert.deepEqual(await store.tags.names(repo.uid, { after: "c-1", limit: 2 }), []);
    });

    it("deleting a repo deletes its tags and tag history, not other repos'", async () => {
      const repo = await newRepo("cascade");
      const keep = await newRepo("cascade-keep");
      const t1 = await put(repo, "x", 1, T0);
      await put(repo, "x", 2, T0 + 1);
      const t2 = await put(repo, "y", 3, T0);
      const kept = await put(keep, "x", 1, T0);
      assert.equal(await store.repos.delete(repo.uid), true);
      assert.equal(await store.tags.get(t1.uid), undefined);
      assert.equal(await store.tags.get(t2.uid), undefined);
      assert.deepEqual(await store.tags.history({ repoUid: repo.uid, tagName: "x", limit: 10 }), []);
      assert.equal((await store.tags.list({ uidp: { childrenOf: repo.uid } }, firstPage())).total, 0n);
      assert.deepEqual(await store.tags.get(kept.uid), kept);
      assert.equal((await store.tags.history({ repoUid: keep.uid, tagName: "x", limit: 10 })).length, 1);
    });

    it("putting a tag into a missing repo is NOT_FOUND", async () => {
      const ghost = repoRow(group, "ghost-repo");
      await assertDomainError(put(ghost, "latest", 1, T0), Code.NotFound);
      assert.equal(await store.tags.getByName(ghost.uid, "latest"), undefined);
    });
  });
}
