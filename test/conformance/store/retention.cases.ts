import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { newChildUid } from "../../../src/core/uidp.js";
import type { RetentionPolicyRow } from "../../../src/storage/retention-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { firstPage, groupRow, repoRow, sortedUids, T0 } from "./fixtures.js";

const digest = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;
const HOUR = 3_600_000;

function policyRow(parentUid: string, scheduleMs = 0): RetentionPolicyRow {
  return {
    uid: newChildUid(parentUid),
    parentUid,
    description: "p",
    rules: [
      { repoPattern: "", tagPattern: "v*", keepLatest: 3, keepPushedWithin: "", keepPulledWithin: "720h" },
    ],
    schedule: scheduleMs === 0 ? "" : `${scheduleMs / HOUR}h`,
    scheduleMs,
    ...(scheduleMs === 0 ? {} : { nextRunTime: T0 + scheduleMs }),
    createTime: T0,
    updateTime: T0,
  };
}

/**
 * RetentionStore (migration 0017): policies by subtree, the run claim (one winner, due only for
 * scheduled runs, the lease), the candidates' push times (the newest history record) and pull
 * times (newest wins; a pull by digest marks every tag pointing at it; pulls of gone repos ignored).
 */
export function retentionCases(db: TestDatabase): void {
  describe("retention policies and pull times", () => {
    let store: Store;
    let org: string;
    let repo: string;

    before(async () => {
      store = await db.openFresh();
      const o = groupRow("", "ret-org");
      await store.groups.insert(o);
      org = o.uid;
      const r = repoRow(org, "ret-app");
      await store.repos.insert(r);
      repo = r.uid;
    });

    it("stores, lists by subtree, updates and deletes a policy", async () => {
      const atOrg = policyRow(org, 24 * HOUR);
      const atRepo = policyRow(repo);
      await store.retention.insert(atOrg);
      await store.retention.insert(atRepo);
      assert.deepEqual(await store.retention.get(atOrg.uid), atOrg);
      assert.deepEqual(await store.retention.get(atRepo.uid), atRepo);
      const underRepo = await store.retention.list({ uidp: { descendantsOf: repo } }, firstPage());
      assert.deepEqual(sortedUids(underRepo.rows), [atRepo.uid]);
      const all = await store.retention.list({ uidp: { descendantsOf: org } }, firstPage());
      assert.deepEqual(sortedUids(all.rows), sortedUids([atOrg, atRepo]));
      const manual = { ...atOrg, schedule: "", scheduleMs: 0, updateTime: T0 + 1 };
      delete manual.nextRunTime;
      assert.equal(await store.retention.update(manual), true);
      assert.deepEqual(await store.retention.get(atOrg.uid), manual);
      assert.equal(await store.retention.update(policyRow(org)), false);
      assert.equal(await store.retention.delete(atOrg.uid), true);
      assert.equal(await store.retention.delete(atOrg.uid), false);
      await store.retention.delete(atRepo.uid);
    });

    it("claims a run once: scheduled only when due, never while leased; finishing records and releases", async () => {
      const p = policyRow(repo, HOUR);
      await store.retention.insert(p);
      const due = T0 + HOUR;
      assert.equal(
        await store.retention.claimRun(p.uid, { now: due - 1, leaseUntil: due + 10, scheduled: true }),
        false,
      );
      assert.deepEqual(await store.retention.due(due - 1, 10), []);
      assert.deepEqual(await store.retention.due(due, 10), [p.uid]);
      const claims = await Promise.all(
        [1, 2, 3].map(() =>
          store.retention.claimRun(p.uid, { now: due, leaseUntil: due + 1000, scheduled: true }),
        ),
      );
      assert.deepEqual(claims.filter(Boolean).length, 1, "one of three concurrent claims wins");
      assert.equal((await store.retention.get(p.uid))?.nextRunTime, due + HOUR);
      assert.equal(
        await store.retention.claimRun(p.uid, { now: due + 1, leaseUntil: due + 2, scheduled: false }),
        false,
      );
      const summary = {
        uid: newChildUid(p.uid),
        startTime: due,
        endTime: due + 5,
        deletedTags: 7,
        scheduled: true,
      };
      await store.retention.finishRun(p.uid, summary);
      assert.deepEqual((await store.retention.get(p.uid))?.lastRun, summary);
      assert.equal(
        await store.retention.claimRun(p.uid, { now: due + 6, leaseUntil: due + 9, scheduled: false }),
        true,
      );
      assert.equal(
        await store.retention.claimRun(p.uid, { now: due + 10, leaseUntil: due + 20, scheduled: false }),
        true,
        "the lease ran out",
      );
      await store.retention.releaseRun(p.uid);
      assert.equal(
        await store.retention.claimRun(p.uid, { now: due + 11, leaseUntil: due + 20, scheduled: false }),
        true,
      );
      await store.retention.delete(p.uid);
    });

    it("answers tags with their newest push and pull times; pulls coalesce to the newest", async () => {
      const r = repoRow(org, "ret-pulls");
      await store.repos.insert(r);
      const put = (name: string, d: number, now: number) =>
        store.tags.put({
          repoUid: r.uid,
          name,
          digest: digest(d),
          deprecated: false,
          newUid: newChildUid(r.uid),
          now,
        });
      await put("a", 1, T0);
      await put("a", 2, T0 + 10); // moved: pushed again
      await put("a", 2, T0 + 20); // the same digest: not a push
      await put("b", 2, T0 + 5);
      await put("c", 3, T0 + 7);
      await store.retention.recordPulls([
        { repoUid: r.uid, tag: "c", time: T0 + 100 },
        { repoUid: r.uid, tag: "c", time: T0 + 50 },
        { repoUid: r.uid, digest: digest(2), time: T0 + 60 },
        { repoUid: r.uid, tag: "missing", time: T0 + 70 },
        { repoUid: newChildUid(org), tag: "a", time: T0 + 70 },
      ]);
      await store.retention.recordPulls([{ repoUid: r.uid, tag: "c", time: T0 + 90 }]);
      const got = (await store.retention.candidates(r.uid)).map((c) => [
        c.name,
        c.digest,
        c.pushTime,
        c.pullTime,
      ]);
      got.sort((x, y) => String(x[0]).localeCompare(String(y[0])));
      assert.deepEqual(got, [
        ["a", digest(2), T0 + 10, T0 + 60],
        ["b", digest(2), T0 + 5, T0 + 60],
        ["c", digest(3), T0 + 7, T0 + 100],
      ]);
      assert.ok(
        (await store.retention.candidates(org)).some((c) => c.repoUid === r.uid),
        "an org's candidates",
      );
      await store.repos.delete(r.uid);
      assert.deepEqual(await store.retention.candidates(r.uid), []);
    });
  });
}
