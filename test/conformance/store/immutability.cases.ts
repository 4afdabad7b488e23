import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { newChildUid } from "../../../src/core/uidp.js";
import { immutableRuleFor } from "../../../src/registry/immutability/immutable-rule-for.js";
import type { ImmutabilityRuleRow } from "../../../src/storage/immutability-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { firstPage, groupRow, repoRow, sortedUids, T0 } from "./fixtures.js";

const digest = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;

function ruleRow(parentUid: string, tagPatterns: string[], time = T0): ImmutabilityRuleRow {
  return {
    uid: newChildUid(parentUid),
    parentUid,
    tagPatterns,
    description: `rule ${tagPatterns.join(",")}`,
    createTime: time,
    updateTime: time,
  };
}

/**
 * ImmutabilityRuleStore (migration 0016) and what it adds to TagStore: the lookup by a repo's
 * ancestors in precedence order, lists by subtree, rules going with their group or repo, the
 * deleted tag's uid on its delete record, and the history record in force at a time.
 */
export function immutabilityCases(db: TestDatabase): void {
  describe("immutability rules and tag restore reads", () => {
    let store: Store;
    let org: string;
    let folder: string;

    before(async () => {
      store = await db.openFresh();
      const o = groupRow("", "imm-org");
      await store.groups.insert(o);
      org = o.uid;
      const f = groupRow(org, "imm-folder");
      await store.groups.insert(f);
      folder = f.uid;
    });

    it("stores, reads, updates and deletes a rule with its patterns in order", async () => {
      const rule = ruleRow(org, ["v*", "!v*-rc*", "[0-9].?"]);
      await store.immutabilityRules.insert(rule);
      assert.deepEqual(await store.immutabilityRules.get(rule.uid), rule);
      const next = { ...rule, tagPatterns: ["release-*"], description: "d2", updateTime: T0 + 5 };
      assert.equal(await store.immutabilityRules.update(next), true);
      assert.deepEqual(await store.immutabilityRules.get(rule.uid), next);
      assert.equal(await store.immutabilityRules.update(ruleRow(org, ["x"])), false);
      assert.equal(await store.immutabilityRules.delete(rule.uid), true);
      assert.equal(await store.immutabilityRules.get(rule.uid), undefined);
      assert.equal(await store.immutabilityRules.delete(rule.uid), false);
    });

    it("finds the nearest matching rule of a repo's ancestors, the oldest first at one level", async () => {
      const repo = repoRow(folder, "imm-app");
      await store.repos.insert(repo);
      const other = repoRow(folder, "imm-other");
      await store.repos.insert(other);
      const atOrg = ruleRow(org, ["*", "!latest"], T0);
      const atFolderNew = ruleRow(folder, ["v*"], T0 + 2);
      const atFolderOld = ruleRow(folder, ["v1.*"], T0 + 1);
      const atRepo = ruleRow(repo.uid, ["v1.2"], T0 + 3);
      const atOtherRepo = ruleRow(other.uid, ["latest"], T0);
      for (const r of [atOrg, atFolderNew, atFolderOld, atRepo, atOtherRepo]) {
        await store.immutabilityRules.insert(r);
      }
      assert.deepEqual(await immutableRuleFor(store, repo.uid, "v1.2"), { uid: atRepo.uid });
      assert.deepEqual(await immutableRuleFor(store, repo.uid, "v1.3"), { uid: atFolderOld.uid });
      assert.deepEqual(await immutableRuleFor(store, repo.uid, "v2"), { uid: atFolderNew.uid });
      assert.deepEqual(await immutableRuleFor(store, repo.uid, "stable"), { uid: atOrg.uid });
      assert.equal(await immutableRuleFor(store, repo.uid, "latest"), undefined);
      assert.deepEqual(await immutableRuleFor(store, other.uid, "latest"), { uid: atOtherRepo.uid });

      const listed = await store.immutabilityRules.list({ uidp: { descendantsOf: folder } }, firstPage());
      assert.deepEqual(sortedUids(listed.rows), sortedUids([atFolderNew, atFolderOld, atRepo, atOtherRepo]));
      const children = await store.immutabilityRules.list(
        { uidp: { childrenOf: folder } },
        firstPage(100, "create_time", true),
      );
      assert.deepEqual(
        children.rows.map((r) => r.uid),
        [atFolderNew.uid, atFolderOld.uid],
      );

      // A repo's rules go with it; a group's with the group.
      assert.equal(await store.repos.delete(other.uid), true);
      assert.equal(await store.immutabilityRules.get(atOtherRepo.uid), undefined);
      const lone = groupRow(org, "imm-lone");
      await store.groups.insert(lone);
      const atLone = ruleRow(lone.uid, ["*"]);
      await store.immutabilityRules.insert(atLone);
      assert.equal(await store.groups.delete(lone.uid), true);
      assert.equal(await store.immutabilityRules.get(atLone.uid), undefined);
      assert.ok(await store.immutabilityRules.get(atOrg.uid));
    });

    it("refuses a move in put's beforeMove without writing, and never calls it for a new tag or the same digest", async () => {
      const repo = repoRow(org, "imm-guarded");
      await store.repos.insert(repo);
      const calls: string[] = [];
      const put = (d: number, now: number, refuse: boolean) =>
        store.transaction((tx) =>
          tx.tags.put({
            repoUid: repo.uid,
            name: "v1",
            digest: digest(d),
            deprecated: false,
            newUid: newChildUid(repo.uid),
            now,
            beforeMove: async (current) => {
              calls.push(current.digest);
              if (refuse) throw new Error("immutable");
            },
          }),
        );
      await put(1, T0, true);
      await put(1, T0 + 1, true);
      assert.deepEqual(calls, []);
      await assert.rejects(put(2, T0 + 2, true), /immutable/);
      assert.deepEqual(calls, [digest(1)]);
      assert.equal((await store.tags.getByName(repo.uid, "v1"))?.digest, digest(1));
      assert.equal((await store.tags.history({ repoUid: repo.uid, tagName: "v1", limit: 10 })).length, 1);
      await put(2, T0 + 3, false);
      assert.equal((await store.tags.getByName(repo.uid, "v1"))?.digest, digest(2));
    });

    it("keeps a deleted tag's uid on its delete record and answers the record in force at a time", async () => {
      const repo = repoRow(org, "imm-history");
      await store.repos.insert(repo);
      const put = (d: number, now: number) =>
        store.tags.put({
          repoUid: repo.uid,
          name: "app",
          digest: digest(d),
          deprecated: false,
          newUid: newChildUid(repo.uid),
          now,
        });
      const tag = await put(1, T0 + 10);
      await put(2, T0 + 20);
      assert.equal(await store.tags.deletedTag(tag.uid), undefined);
      assert.equal(await store.tags.delete(tag.uid, T0 + 30), true);
      assert.deepEqual(await store.tags.deletedTag(tag.uid), { repoUid: repo.uid, name: "app" });
      assert.equal(await store.tags.deletedTag(newChildUid(repo.uid)), undefined);

      assert.equal(await store.tags.historyAt(repo.uid, "app", T0 + 9), undefined);
      assert.equal((await store.tags.historyAt(repo.uid, "app", T0 + 10))?.digest, digest(1));
      assert.equal((await store.tags.historyAt(repo.uid, "app", T0 + 19))?.digest, digest(1));
      assert.equal((await store.tags.historyAt(repo.uid, "app", T0 + 25))?.digest, digest(2));
      assert.deepEqual(await store.tags.historyAt(repo.uid, "app", T0 + 99), {
        repoUid: repo.uid,
        tagName: "app",
        digest: "",
        updateTime: T0 + 30,
      });
      assert.equal(await store.tags.historyAt(repo.uid, "other", T0 + 99), undefined);
    });
  });
}
