import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { before, describe, it } from "node:test";
import { newChildUid } from "../../../src/core/uidp.js";
import { REGISTRY_PUSH_EVENT } from "../../../src/events/event-types.js";
import {
  REPLICATION_TRIGGER_EVENT_TYPE,
  type ReplicationRuleRow,
  type ReplicationRunRow,
} from "../../../src/storage/replication-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { assertAlreadyExists, firstPage, groupRow, sortedUids, T0 } from "./fixtures.js";

const MIN = 60_000;

function ruleRow(orgUid: string, name: string, over: Partial<ReplicationRuleRow> = {}): ReplicationRuleRow {
  return {
    uid: newChildUid(orgUid),
    parentUid: orgUid,
    name,
    direction: "PUSH",
    remoteUrl: "https://remote.example",
    remoteUsername: "bot",
    remotePassword: "sealed:v1:abc",
    repoPattern: "**",
    tagPattern: "",
    destination: "mirror",
    trigger: "MANUAL",
    interval: "",
    intervalMs: 0,
    enabled: true,
    createTime: T0,
    updateTime: T0,
    ...over,
  };
}

function pushEvent(groupUid: string, repository: string, tag: string) {
  return {
    id: randomUUID(),
    type: REGISTRY_PUSH_EVENT,
    source: "//wharf.test/registry",
    subject: `${groupUid}/0000000000000001`,
    groupUid,
    time: T0,
    extensions: {},
    data: JSON.stringify({ actor: { subject: "" }, body: { repository, tag } }),
  };
}

const progress = (n: number) => ({
  copiedManifests: n,
  copiedBlobs: 2 * n,
  copiedBytes: 1000 * n,
  skippedBlobs: n,
  errors: [{ reference: "acme/app:v1", message: "remote said no" }],
  errorsOmitted: 3,
});

/**
 * ReplicationStore (migration 0022): rules (unique names per organization, lists by subtree),
 * runs (coalesced queueing, one claim winner, one RUNNING run per rule, leases, a dead process's
 * run taken over with zeroed progress, newest-first lists), INTERVAL claims, and the ON_PUSH
 * cursor (the outbox keeps an organization's pushes for it until it passes them).
 */
export function replicationCases(db: TestDatabase): void {
  describe("replication rules, runs and push cursors", () => {
    let store: Store;
    let org: string;
    let other: string;

    before(async () => {
      store = await db.openFresh();
      const o = groupRow("", "repl-org");
      await store.groups.insert(o);
      org = o.uid;
      const p = groupRow("", "repl-other");
      await store.groups.insert(p);
      other = p.uid;
    });

    it("the trigger event type is the registry's push event", () => {
      assert.equal(REPLICATION_TRIGGER_EVENT_TYPE, REGISTRY_PUSH_EVENT);
    });

    it("stores, lists by subtree, updates and deletes a rule; names are unique per organization", async () => {
      const a = ruleRow(org, "a", {
        trigger: "INTERVAL",
        interval: "5m",
        intervalMs: 5 * MIN,
        nextRunTime: T0,
      });
      const b = ruleRow(org, "b", { enabled: false, direction: "PULL" });
      const c = ruleRow(other, "a");
      await store.replication.insertRule(a);
      await store.replication.insertRule(b);
      await store.replication.insertRule(c);
      assert.deepEqual(await store.replication.getRule(a.uid), a);
      assert.deepEqual(await store.replication.getRule(b.uid), b);
      await assertAlreadyExists(store.replication.insertRule(ruleRow(org, "a")));
      const inOrg = await store.replication.listRules({ uidp: { descendantsOf: org } }, firstPage());
      assert.deepEqual(sortedUids(inOrg.rows), sortedUids([a, b]));
      const within = await store.replication.listRules(
        { within: { all: false, uids: [other] } },
        firstPage(),
      );
      assert.deepEqual(sortedUids(within.rows), [c.uid]);
      const byName = await store.replication.listRules(
        { uidp: { descendantsOf: org } },
        firstPage(100, "name", true),
      );
      assert.deepEqual(
        byName.rows.map((r) => r.name),
        ["b", "a"],
      );
      const changed: ReplicationRuleRow = { ...b, name: "b2", enabled: true, updateTime: T0 + 1 };
      assert.equal(await store.replication.updateRule(changed), true);
      assert.deepEqual(await store.replication.getRule(b.uid), changed);
      await assertAlreadyExists(store.replication.updateRule({ ...changed, name: "a" }));
      assert.equal(await store.replication.updateRule(ruleRow(org, "ghost")), false);
      assert.equal(await store.replication.deleteRule(c.uid), true);
      assert.equal(await store.replication.deleteRule(c.uid), false);
      assert.equal(await store.replication.getRule(c.uid), undefined);
    });

    it("queues one run per rule (coalesced), one claim wins, one RUNNING run per rule", async () => {
      const rule = ruleRow(org, "runs");
      await store.replication.insertRule(rule);
      const first = await store.replication.enqueueRun({
        uid: newChildUid(rule.uid),
        ruleUid: rule.uid,
        trigger: "MANUAL",
        createTime: T0,
      });
      assert.equal(first.state, "QUEUED");
      const again = await store.replication.enqueueRun({
        uid: newChildUid(rule.uid),
        ruleUid: rule.uid,
        trigger: "ON_PUSH",
        createTime: T0 + 1,
      });
      assert.equal(again.uid, first.uid, "a second trigger while one is queued coalesces");

      const claims = await Promise.all(
        ["p1", "p2", "p3"].map((owner) =>
          store.replication.claimRun({ owner, now: T0 + 10, leaseUntil: T0 + 10 + MIN }),
        ),
      );
      const won = claims.filter((c): c is ReplicationRunRow => c !== undefined);
      assert.equal(won.length, 1, "exactly one process takes the run");
      const running = won[0] as ReplicationRunRow;
      assert.equal(running.uid, first.uid);
      assert.equal(running.state, "RUNNING");
      assert.equal(running.startTime, T0 + 10);

      // A trigger while it runs queues one more, which waits for the running one.
      const next = await store.replication.enqueueRun({
        uid: newChildUid(rule.uid),
        ruleUid: rule.uid,
        trigger: "ON_PUSH",
        createTime: T0 + 20,
      });
      assert.notEqual(next.uid, first.uid);
      assert.equal(
        await store.replication.claimRun({ owner: "p9", now: T0 + 30, leaseUntil: T0 + MIN }),
        undefined,
      );

      const owner = running.leaseOwner;
      assert.equal(await store.replication.renewLease(first.uid, "intruder", T0 + 2 * MIN), false);
      assert.equal(await store.replication.renewLease(first.uid, owner, T0 + 2 * MIN), true);
      assert.equal(await store.replication.saveProgress(first.uid, owner, progress(1)), true);
      assert.equal(await store.replication.saveProgress(first.uid, "intruder", progress(9)), false);
      const saved = await store.replication.getRun(first.uid);
      assert.equal(saved?.copiedBytes, 1000);
      assert.deepEqual(saved?.errors, progress(1).errors);
      assert.equal(saved?.errorsOmitted, 3);

      assert.equal(
        await store.replication.finishRun(first.uid, owner, {
          ...progress(2),
          state: "FAILED",
          endTime: T0 + 40,
        }),
        true,
      );
      const finished = await store.replication.getRun(first.uid);
      assert.equal(finished?.state, "FAILED");
      assert.equal(finished?.endTime, T0 + 40);
      assert.equal(finished?.copiedManifests, 2);
      assert.equal(finished?.leaseOwner, "");
      assert.equal(
        await store.replication.finishRun(first.uid, owner, {
          ...progress(2),
          state: "SUCCEEDED",
          endTime: T0 + 41,
        }),
        false,
        "a finished run cannot be finished again",
      );

      const taken = await store.replication.claimRun({
        owner: "p2",
        now: T0 + 50,
        leaseUntil: T0 + 50 + MIN,
      });
      assert.equal(taken?.uid, next.uid, "the queued run follows once the first ended");
      assert.equal(taken?.trigger, "ON_PUSH");
    });

    it("takes over a RUNNING run whose lease ended, from the start; a released run at once", async () => {
      const rule = ruleRow(org, "crash");
      await store.replication.insertRule(rule);
      const run = await store.replication.enqueueRun({
        uid: newChildUid(rule.uid),
        ruleUid: rule.uid,
        trigger: "MANUAL",
        createTime: T0,
      });
      await store.replication.claimRun({ owner: "dead", now: T0, leaseUntil: T0 + MIN });
      await store.replication.saveProgress(run.uid, "dead", progress(5));
      // Other runs may be claimable too (of other rules in this suite): claim until ours or none.
      const claimOurs = async (owner: string, now: number) => {
        for (;;) {
          const c = await store.replication.claimRun({ owner, now, leaseUntil: now + MIN });
          if (!c || c.uid === run.uid) return c;
        }
      };
      assert.equal(await claimOurs("alive", T0 + MIN - 1), undefined, "not while the lease holds");
      const taken = await claimOurs("alive", T0 + MIN + 1);
      assert.equal(taken?.leaseOwner, "alive");
      assert.equal(taken?.state, "RUNNING");
      assert.equal(taken?.copiedBytes, 0, "started again from the start");
      assert.deepEqual(taken?.errors, []);
      assert.equal(
        await store.replication.saveProgress(run.uid, "dead", progress(1)),
        false,
        "the dead owner lost it",
      );

      await store.replication.releaseRun(run.uid, "alive");
      const again = await claimOurs("third", T0 + MIN + 2);
      assert.equal(again?.leaseOwner, "third", "a released run is taken at once");
    });

    it("lists runs newest first, by rule, within scopes, in pages; deleting a rule deletes its runs", async () => {
      const rule = ruleRow(other, "listed");
      await store.replication.insertRule(rule);
      const uids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const run = await store.replication.enqueueRun({
          uid: newChildUid(rule.uid),
          ruleUid: rule.uid,
          trigger: "MANUAL",
          createTime: T0 + 100 + i,
        });
        uids.push(run.uid);
        const claimed = await store.replication.claimRun({
          owner: "o",
          now: T0 + 200 + i,
          leaseUntil: T0 + 10 * MIN,
        });
        assert.ok(claimed);
        await store.replication.finishRun(claimed.uid, "o", {
          ...progress(0),
          state: "SUCCEEDED",
          endTime: T0 + 300,
        });
      }
      const page1 = await store.replication.listRuns({ ruleUid: rule.uid, limit: 2 });
      assert.equal(page1.total, 3);
      assert.deepEqual(
        page1.rows.map((r) => r.uid),
        [uids[2], uids[1], uids[0]],
        "limit + 1 rows, newest first",
      );
      const last = page1.rows[1] as ReplicationRunRow;
      const page2 = await store.replication.listRuns({
        ruleUid: rule.uid,
        after: { createTime: last.createTime, uid: last.uid },
        limit: 2,
      });
      assert.deepEqual(
        page2.rows.map((r) => r.uid),
        [uids[0]],
      );
      const inOrg = await store.replication.listRuns({ within: { all: false, uids: [org] }, limit: 100 });
      assert.ok(inOrg.rows.every((r) => r.uid.startsWith(`${org}/`)));
      assert.ok(inOrg.total > 0);

      assert.equal(await store.replication.deleteRule(rule.uid), true);
      assert.equal(await store.replication.getRun(uids[0] as string), undefined);
      assert.equal((await store.replication.listRuns({ ruleUid: rule.uid, limit: 10 })).total, 0);
    });

    it("claims a due INTERVAL rule once", async () => {
      const rule = ruleRow(other, "tick", {
        trigger: "INTERVAL",
        interval: "5m",
        intervalMs: 5 * MIN,
        nextRunTime: T0 + 5 * MIN,
      });
      await store.replication.insertRule(rule);
      assert.ok(!(await store.replication.dueRules(T0, 100)).includes(rule.uid));
      assert.ok((await store.replication.dueRules(T0 + 5 * MIN, 100)).includes(rule.uid));
      const claims = await Promise.all(
        [1, 2, 3].map(() => store.replication.claimDue(rule.uid, T0 + 5 * MIN + 1)),
      );
      assert.deepEqual(claims.filter(Boolean).length, 1, "one winner");
      assert.equal((await store.replication.getRule(rule.uid))?.nextRunTime, T0 + 10 * MIN + 1);
      assert.ok(!(await store.replication.dueRules(T0 + 5 * MIN + 2, 100)).includes(rule.uid));
    });

    it("keeps an organization's pushes for its ON_PUSH cursor, reads them after it, moves it once", async () => {
      const o = groupRow("", "repl-push");
      await store.groups.insert(o);
      const team = groupRow(o.uid, "team");
      await store.groups.insert(team);
      // No subscription and no cursor: the outbox keeps nothing.
      assert.equal(await store.events.append(pushEvent(team.uid, "repl-push/team/app", "v0")), 0);
      assert.equal(await store.replication.pushEvents(o.uid, 10), undefined);

      const rule = ruleRow(o.uid, "on-push", { trigger: "ON_PUSH" });
      await store.replication.insertRule(rule);
      await store.replication.syncPushCursor(o.uid);
      assert.ok((await store.replication.pushCursorOrgs()).includes(o.uid));
      const start = await store.replication.pushEvents(o.uid, 10);
      assert.deepEqual(start?.events, [], "the cursor starts after what was there");

      await store.events.append(pushEvent(team.uid, "repl-push/team/app", "v1"));
      await store.events.append({
        ...pushEvent(o.uid, "repl-push/x", "v2"),
        type: "dev.wharf.registry.pull.v1",
      });
      await store.events.append(pushEvent(other, "repl-other/app", "v3"));
      await store.events.append(pushEvent(o.uid, "repl-push/app", "v4"));
      await store.events.prune();
      const read = await store.replication.pushEvents(o.uid, 10);
      assert.ok(read);
      const tags = read.events.map((e) => (JSON.parse(e.data) as { body: { tag: string } }).body.tag);
      assert.deepEqual(tags, ["v1", "v4"], "its pushes only, kept through a prune, in order");

      const to = (read.events.at(-1) as { seq: number }).seq;
      const moves = await Promise.all(
        [1, 2].map(() => store.replication.advancePushCursor(o.uid, read.cursor, to)),
      );
      assert.deepEqual(moves.filter(Boolean).length, 1, "one process moves the cursor");
      assert.deepEqual((await store.replication.pushEvents(o.uid, 10))?.events, []);
      await store.events.prune();

      // No ON_PUSH rule left: the cursor goes.
      await store.replication.updateRule({ ...rule, trigger: "MANUAL" });
      await store.replication.syncPushCursor(o.uid);
      assert.equal(await store.replication.pushEvents(o.uid, 10), undefined);
      assert.equal(await store.events.append(pushEvent(team.uid, "repl-push/team/app", "v5")), 0);
    });
  });
}
