import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import type { Clock } from "../../src/core/clock.js";
import { newChildUid } from "../../src/core/uidp.js";
import { forEachEngine } from "../support/databases.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// Scheduled retention runs coordinate across processes: two servers on one PostgreSQL database, both
// polling for due policies every 25 ms, and 20 policies falling due at once (the servers' shared
// clock jumps past their first run time). Each policy must run exactly once: one "retention run"
// log line across both servers, its tags removed once, its next run one interval on.

const POLICIES = 20;
const TAGS_PER_REPO = 3;

forEachEngine(
  "scheduled retention runs on two servers",
  (db) => {
    let servers: TestServer[] = [];
    let offset = 0;
    const clock: Clock = { now: () => Date.now() + offset };

    before(async () => {
      const { databaseUrl } = await db.freshOptions();
      const start = () =>
        startTestServer({ ...(databaseUrl ? { databaseUrl } : {}), clock, retention: { pollMs: 25 } });
      servers = [await start(), await start()];
    });
    after(async () => {
      for (const server of servers) await server.close();
    });

    it("runs each due policy once, on one of the servers", async (t) => {
      const [a, b] = servers as [TestServer, TestServer];
      const org = await a.create("/iam/v2/groups", { name: "acme" });
      const policies: string[] = [];
      for (let i = 0; i < POLICIES; i++) {
        const repo = await a.create(`/registry/v2/repos/${org}`, { name: `app${i}` });
        for (let k = 0; k < TAGS_PER_REPO; k++) {
          await a.store.tags.put({
            repoUid: repo,
            name: `t${k}`,
            digest: `sha256:${String(k).repeat(64)}`,
            deprecated: false,
            newUid: newChildUid(repo),
            now: clock.now() - k * 60_000,
          });
        }
        policies.push(
          await (i % 2 === 0 ? a : b).create(`/registry/v2/retentionPolicies/${repo}`, {
            rules: [{ keepLatest: 1 }],
            schedule: "1h",
          }),
        );
      }
      const firstDue = (await a.store.retention.get(policies[0] as string))?.nextRunTime as number;
      assert.ok(firstDue > clock.now() + 59 * 60_000, "first run one interval after creation");

      offset = 2 * 3_600_000; // every policy is due now, on both servers
      const jumpedAt = clock.now();
      const deadline = Date.now() + 30_000;
      const ran = async () =>
        (await Promise.all(policies.map((uid) => a.store.retention.get(uid)))).filter((p) => p?.lastRun)
          .length;
      while ((await ran()) < POLICIES && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      assert.equal(await ran(), POLICIES, "every due policy ran");

      const runLines = [...a.logLines, ...b.logLines].filter((line) => line.msg === "retention run");
      assert.deepEqual(
        runLines.map((line) => line.policy).sort(),
        [...policies].sort(),
        "one run per policy across both servers",
      );
      for (const uid of policies) {
        const policy = await a.store.retention.get(uid);
        assert.equal(policy?.lastRun?.deletedTags, TAGS_PER_REPO - 1);
        assert.equal(policy?.lastRun?.scheduled, true);
        assert.ok((policy?.nextRunTime ?? 0) >= jumpedAt + 3_600_000, "the next run is one interval on");
      }
      const remaining = await a.store.tags.list(
        { uidp: { descendantsOf: org } },
        { order: { field: "uid", desc: false }, limit: 1000, skip: 0 },
      );
      assert.equal(remaining.rows.length, POLICIES, "the latest tag of each repo");
      t.diagnostic(
        `runs by server: ${a.logLines.filter((l) => l.msg === "retention run").length} / ${b.logLines.filter((l) => l.msg === "retention run").length}`,
      );
    });
  },
  ["postgres"],
);
