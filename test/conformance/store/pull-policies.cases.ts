import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { newChildUid } from "../../../src/core/uidp.js";
import type { PullPolicyRow } from "../../../src/storage/pull-policy-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { assertAlreadyExists, firstPage, groupRow, repoRow, sortedUids, T0 } from "./fixtures.js";

const digest = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;

function policyRow(parentUid: string, name: string, time = T0): PullPolicyRow {
  return {
    uid: newChildUid(parentUid),
    parentUid,
    name,
    mode: "ENFORCE",
    requireSignature: true,
    denySeverity: "CRITICAL",
    onlyFixable: true,
    denyEol: false,
    requireSbom: false,
    exemptIdentities: [],
    createTime: time,
    updateTime: time,
  };
}

/**
 * PullPolicyStore (migration 0024) and the narrow reads the pull-policy evaluator adds: tags naming
 * a digest, and the indexes listing a child manifest.
 */
export function pullPolicyCases(db: TestDatabase): void {
  describe("pull policies and the evaluator's reads", () => {
    let store: Store;
    let org: string;
    let folder: string;

    before(async () => {
      store = await db.openFresh();
      const o = groupRow("", "pol-org");
      await store.groups.insert(o);
      org = o.uid;
      const f = groupRow(org, "pol-folder");
      await store.groups.insert(f);
      folder = f.uid;
    });

    it("stores, reads, updates and deletes a policy with every field", async () => {
      const policy = { ...policyRow(org, "prod"), exemptIdentities: ["a".repeat(40), "b".repeat(40)] };
      await store.pullPolicies.insert(policy);
      assert.deepEqual(await store.pullPolicies.get(policy.uid), policy);
      const next: PullPolicyRow = {
        ...policy,
        name: "prod2",
        mode: "WARN",
        requireSignature: false,
        denySeverity: "",
        onlyFixable: false,
        denyEol: true,
        requireSbom: true,
        exemptIdentities: [],
        updateTime: T0 + 5,
      };
      assert.equal(await store.pullPolicies.update(next), true);
      assert.deepEqual(await store.pullPolicies.get(policy.uid), next);
      assert.equal(await store.pullPolicies.update(policyRow(org, "ghost")), false);
      assert.ok((await store.pullPolicies.all()).some((p) => p.uid === policy.uid));
      assert.equal(await store.pullPolicies.delete(policy.uid), true);
      assert.equal(await store.pullPolicies.get(policy.uid), undefined);
      assert.equal(await store.pullPolicies.delete(policy.uid), false);
    });

    it("keeps names unique per parent, on insert and rename", async () => {
      const a = policyRow(folder, "same");
      await store.pullPolicies.insert(a);
      await assertAlreadyExists(store.pullPolicies.insert(policyRow(folder, "same")));
      await store.pullPolicies.insert(policyRow(org, "same"));
      const b = policyRow(folder, "other");
      await store.pullPolicies.insert(b);
      await assertAlreadyExists(store.pullPolicies.update({ ...b, name: "same" }));
    });

    it("lists by subtree; a repo's and a group's policies go with them", async () => {
      const repo = repoRow(folder, "pol-app");
      await store.repos.insert(repo);
      const atRepo = policyRow(repo.uid, "repo-level", T0 + 1);
      await store.pullPolicies.insert(atRepo);
      const listed = await store.pullPolicies.list({ uidp: { descendantsOf: folder } }, firstPage());
      assert.ok(sortedUids(listed.rows).includes(atRepo.uid));
      assert.ok(listed.rows.every((r) => r.parentUid.startsWith(folder)));
      const children = await store.pullPolicies.list({ uidp: { childrenOf: repo.uid } }, firstPage());
      assert.deepEqual(
        children.rows.map((r) => r.uid),
        [atRepo.uid],
      );

      assert.equal(await store.repos.delete(repo.uid), true);
      assert.equal(await store.pullPolicies.get(atRepo.uid), undefined);
      const lone = groupRow(org, "pol-lone");
      await store.groups.insert(lone);
      const atLone = policyRow(lone.uid, "lone");
      await store.pullPolicies.insert(atLone);
      assert.equal(await store.groups.delete(lone.uid), true);
      assert.equal(await store.pullPolicies.get(atLone.uid), undefined);
    });

    it("reads the tags naming a digest and the indexes listing a child manifest", async () => {
      const repo = repoRow(folder, "pol-reads");
      await store.repos.insert(repo);
      const other = repoRow(folder, "pol-reads-other");
      await store.repos.insert(other);
      const put = (repoUid: string, name: string, d: number) =>
        store.tags.put({
          repoUid,
          name,
          digest: digest(d),
          deprecated: false,
          newUid: newChildUid(repoUid),
          now: T0,
        });
      const manifest = (repoUid: string, d: number) => ({
        repoUid,
        digest: digest(d),
        mediaType: "application/vnd.oci.image.index.v1+json",
        content: Buffer.from(`{"n":${d}}`),
        createTime: T0,
      });
      await store.manifests.put(manifest(repo.uid, 1), []);
      await store.manifests.put(manifest(other.uid, 1), []);
      await put(repo.uid, "v2", 1);
      await put(repo.uid, "v1", 1);
      await put(repo.uid, "v3", 2);
      await put(other.uid, "v9", 1);
      assert.deepEqual(
        (await store.tags.ofDigest(repo.uid, digest(1))).map((t) => t.name),
        ["v1", "v2"],
      );
      assert.deepEqual(await store.tags.ofDigest(repo.uid, digest(7)), []);

      await store.manifests.put(manifest(repo.uid, 10), [
        { digest: digest(1), kind: "manifest" },
        { digest: digest(5), kind: "blob" },
      ]);
      await store.manifests.put(manifest(other.uid, 11), [{ digest: digest(1), kind: "manifest" }]);
      assert.deepEqual(await store.manifests.indexesOf(repo.uid, digest(1)), [digest(10)]);
      assert.deepEqual(await store.manifests.indexesOf(repo.uid, digest(5)), []);
    });
  });
}
