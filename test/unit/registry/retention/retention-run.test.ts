import assert from "node:assert/strict";
import { before, it } from "node:test";
import { PageTokenCodec } from "../../../../src/core/list.js";
import { newChildUid } from "../../../../src/core/uidp.js";
import { createEventRecorder } from "../../../../src/events/event-recorder.js";
import type { RetentionDeps } from "../../../../src/registry/retention/retention-deps.js";
import { planRemovals, runPolicy } from "../../../../src/registry/retention/retention-run.js";
import type { RetentionPolicyRow } from "../../../../src/storage/retention-store.js";
import type { Store } from "../../../../src/storage/store.js";
import { groupRow, repoRow } from "../../../conformance/store/fixtures.js";
import { onOneEngine } from "../../../support/databases.js";

// A run re-checks each tag in its delete's transaction: a tag moved, or protected by an
// immutability rule, after the run judged it is not removed.

const digest = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;

onOneEngine("retention runs re-check each tag where they delete it", (db) => {
  let store: Store;
  let repo: string;
  let policy: RetentionPolicyRow;
  const now = Date.UTC(2026, 10, 1);
  const clock = { now: () => now };
  /** Tag names protected in delete transactions only (as if a rule appeared after the plan). */
  const protectedLate = new Set<string>(["t2"]);
  let moved = false;
  const deps = (): RetentionDeps => ({
    store,
    pageTokens: new PageTokenCodec(Buffer.from("k"), clock),
    events: createEventRecorder({ apiUrl: "http://api.test", registryUrl: "http://registry.test" }),
    immutableRuleFor: async (tx, repoUid, tagName) => {
      if (tx === store) return undefined; // the plan's read: nothing protected yet
      if (tagName === "t1" && !moved) {
        // Another writer moves t4 while the run is under way (committed with t1's delete).
        moved = true;
        const t4 = await tx.tags.getByName(repoUid, "t4");
        await tx.tags.put({
          repoUid,
          name: "t4",
          digest: digest(99),
          deprecated: false,
          newUid: t4?.uid ?? "",
          now,
        });
      }
      return protectedLate.has(tagName) ? { uid: "late-rule" } : undefined;
    },
  });

  before(async () => {
    store = await db.openFresh();
    const org = groupRow("", "runs");
    await store.groups.insert(org);
    const r = repoRow(org.uid, "app");
    await store.repos.insert(r);
    repo = r.uid;
    for (let i = 0; i < 5; i++) {
      await store.tags.put({
        repoUid: repo,
        name: `t${i}`,
        digest: digest(i),
        deprecated: false,
        newUid: newChildUid(repo),
        now: now - (i + 1) * 3_600_000,
      });
    }
    policy = {
      uid: newChildUid(org.uid),
      parentUid: org.uid,
      description: "",
      rules: [{ repoPattern: "", tagPattern: "", keepLatest: 1, keepPushedWithin: "", keepPulledWithin: "" }],
      schedule: "",
      scheduleMs: 0,
      createTime: now,
      updateTime: now,
    };
    await store.retention.insert(policy);
  });

  it("skips a tag moved or newly protected since it was judged, and removes the rest", async () => {
    const planned = (await planRemovals(deps(), policy, now)).map((r) => r.tag.name);
    assert.deepEqual(planned, ["t1", "t2", "t3", "t4"]);
    const outcome = await runPolicy(deps(), { principal: undefined, clock }, policy.uid, false);
    assert.deepEqual(
      outcome?.removed.map((r) => r.tag.name),
      ["t1", "t3"],
    );
    assert.equal(outcome?.summary.deletedTags, 2);
    assert.ok(await store.tags.getByName(repo, "t2"), "protected in the delete's transaction: kept");
    assert.equal((await store.tags.getByName(repo, "t4"))?.digest, digest(99), "moved since the plan: kept");
    assert.equal((await store.retention.get(policy.uid))?.lastRun?.deletedTags, 2);
  });
});
