import assert from "node:assert/strict";
import { before, it } from "node:test";
import { newChildUid, newRootUid } from "../../../../src/core/uidp.js";
import type { QuotaNoticeFacts } from "../../../../src/registry/quotas/quota-errors.js";
import { QuotaExceededError } from "../../../../src/registry/quotas/quota-errors.js";
import { admitBlob, admitManifest } from "../../../../src/registry/quotas/storage-quota.js";
import type { Store } from "../../../../src/storage/store.js";
import { onOneEngine } from "../../../support/databases.js";

const digest = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;

// The storage quota's rules against a real store: refusal past the limit (exactly at it passes),
// content already counted is free, and the 80 % warning fires once per crossing.
onOneEngine("storage quota admission", (db) => {
  let store: Store;
  let org: string;
  let repo: string;
  const notices: { verb: string; notice: QuotaNoticeFacts }[] = [];
  const notify = async (_tx: Store, verb: "warning" | "exceeded", notice: QuotaNoticeFacts) => {
    notices.push({ verb, notice });
  };
  let n = 0;

  /** A manifest of `size` bytes referencing nothing, admitted and stored like a commit does. */
  async function push(size: number): Promise<string> {
    const d = digest(++n);
    await store.transaction(async (tx) => {
      await admitManifest(tx, {
        repoUid: repo,
        repository: "acme/app",
        digest: d,
        size,
        references: [],
        notify,
      });
      await tx.manifests.put(
        { repoUid: repo, digest: d, mediaType: "m", content: Buffer.alloc(size), createTime: n },
        [],
      );
    });
    return d;
  }

  before(async () => {
    store = await db.openFresh();
    org = newRootUid();
    await store.groups.insert({
      uid: org,
      name: "acme",
      description: "",
      verified: false,
      createTime: 1,
      updateTime: 1,
    });
    repo = newChildUid(org);
    await store.repos.insert({
      uid: repo,
      groupUid: org,
      name: "app",
      description: "",
      readme: "",
      createTime: 1,
      updateTime: 1,
    });
  });

  it("admits anything without a quota, and refuses past it with usage and limit in the message", async () => {
    await push(500);
    await store.usage.setQuota(org, { storageBytes: 1_000 }, 1);
    await assert.rejects(push(501), (err: unknown) => {
      assert.ok(err instanceof QuotaExceededError);
      assert.equal(err.message, "quota exceeded: acme uses 500 of 1000 bytes");
      assert.deepEqual(err.notice, {
        orgUid: org,
        storageBytes: 500,
        requestedBytes: 501,
        quotaStorageBytes: 1_000,
        quotaRepoCount: 0,
        repository: "acme/app",
      });
      return true;
    });
    assert.equal((await store.usage.get(org))?.storageBytes, 500, "the refused push changed nothing");
  });

  it("warns once when usage crosses 80 %, not on pushes above it; again after it fell below", async () => {
    notices.length = 0;
    await push(299); // 799: below 80 %
    assert.equal(notices.length, 0);
    const crossing = await push(1); // 800: exactly 80 %
    assert.deepEqual(
      notices.map((x) => [x.verb, x.notice.storageBytes, x.notice.requestedBytes]),
      [["warning", 800, 1]],
    );
    await push(100); // 900: above, no second warning
    assert.equal(notices.length, 1);
    await push(100); // exactly at the limit passes
    assert.equal((await store.usage.get(org))?.storageBytes, 1_000);
    // Deletes take usage back below 80 %; the next crossing warns again.
    await store.manifests.delete(repo, crossing);
    await store.manifests.delete(repo, digest(n));
    await store.manifests.delete(repo, digest(n - 1));
    assert.equal((await store.usage.get(org))?.storageBytes, 799);
    await push(50);
    assert.deepEqual(
      notices.map((x) => [x.verb, x.notice.storageBytes]),
      [
        ["warning", 800],
        ["warning", 849],
      ],
    );
  });

  it("a blob the organization counts is free; an uncounted one must fit alone", async () => {
    await store.usage.setQuota(org, { storageBytes: 900 }, 2);
    const counted = digest(1);
    await store.transaction((tx) =>
      admitBlob(tx, { repoUid: repo, repository: "", digest: counted, size: 10_000 }),
    );
    await assert.rejects(
      store.transaction((tx) =>
        admitBlob(tx, { repoUid: repo, repository: "", digest: digest(999), size: 52 }),
      ),
      QuotaExceededError,
    );
    await store.transaction((tx) =>
      admitBlob(tx, { repoUid: repo, repository: "", digest: digest(998), size: 51 }),
    );
  });
});
