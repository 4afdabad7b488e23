import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import type {
  ReplicationCopier,
  ReplicationProgress,
  ReplicationRuleConfig,
} from "../../src/registry/replication/replication-contract.js";
import { expectJson } from "../support/api-assertions.js";
import { onOneEngine } from "../support/databases.js";
import { registeredPerson } from "../support/registered-person.js";
import { pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

/** A run as the API answers it (proto JSON). */
interface Run {
  uid: string;
  rule: string;
  state: string;
  trigger: string;
  copiedManifests?: string;
  copiedBlobs?: string;
  copiedBytes?: string;
  skippedBlobs?: string;
  errors?: { reference: string; message: string }[];
  errorsOmitted?: string;
  startTime?: string;
  endTime?: string;
}

/**
 * The stand-in copier: what each call of the test's rules does, by rule name. The default reports
 * one manifest, two blobs (one skipped) and 300 bytes.
 */
type Behaviour = (
  rule: ReplicationRuleConfig,
  progress: ReplicationProgress,
  signal: AbortSignal,
) => Promise<void>;

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

onOneEngine("replication rules and runs over the API (a stand-in copier)", (db) => {
  let wharf: TestServer;
  let org: string;
  let folder: string;
  let ownerB: string;
  let orgB: string;
  const behaviours = new Map<string, Behaviour>();
  const calls: ReplicationRuleConfig[] = [];
  const copier: ReplicationCopier = {
    async run(rule, progress, signal) {
      calls.push(rule);
      const behaviour = behaviours.get(rule.name);
      if (behaviour) return behaviour(rule, progress, signal);
      progress.add({ copiedManifests: 1, copiedBlobs: 1, copiedBytes: 300 });
      progress.add({ skippedBlobs: 1 });
    },
  };

  const api = (path: string, init: { method?: string; body?: unknown; token?: string } = {}) =>
    wharf.api(path, { ...init, token: init.token ?? wharf.adminToken });
  const rule = (name: string, over: Record<string, unknown> = {}) => ({
    name,
    direction: "PUSH",
    trigger: "MANUAL",
    remote: { url: "http://127.0.0.1:9/team", username: "bot", password: "s3cret-pw" },
    repoPattern: "apps/**",
    tagPattern: "v*",
    destination: "mirror",
    enabled: true,
    ...over,
  });
  const create = async (name: string, over: Record<string, unknown> = {}) =>
    expectJson<Record<string, unknown> & { uid: string }>(
      await api(`/registry/v2/replicationRules/${org}`, { method: "POST", body: rule(name, over) }),
    );
  const runOf = async (uid: string) => expectJson<Run>(await api(`/registry/v2/replicationRuns/${uid}`));
  const ended = (uid: string) =>
    until(`run ${uid} to end`, async () => {
      const run = await runOf(uid);
      return run.state === "SUCCEEDED" || run.state === "FAILED" ? run : undefined;
    });
  const violation = async (res: Response, status: number) => {
    const text = await res.text();
    assert.equal(res.status, status, text);
    return JSON.parse(text) as { message: string; details?: { fieldViolations?: { field: string }[] }[] };
  };
  const fieldOf = (body: { details?: { fieldViolations?: { field: string }[] }[] }) =>
    body.details?.flatMap((d) => d.fieldViolations ?? []).map((v) => v.field)[0];

  before(async () => {
    const { databaseUrl } = await db.freshOptions();
    wharf = await startTestServer({
      ...(databaseUrl ? { databaseUrl } : {}),
      config: { eventsAllowLoopback: "true", eventsAllowHttp: "true" },
      replication: { copier, pollMs: 50, progressMs: 20 },
    });
    org = await wharf.create("/iam/v2/groups", { name: "acme" });
    folder = await wharf.create(`/iam/v2/groups/${org}`, { name: "apps" });
    const b = await registeredPerson(wharf, "owner-b");
    ownerB = b.token;
    orgB = await wharf.create("/iam/v2/groups", { name: "globex" }, ownerB);
    // A subscription, so the outbox keeps the rules' events for inspection.
    await wharf.create(`/events/v2/subscriptions/${org}`, { sink: "http://127.0.0.1:9/hook" });
  });
  after(async () => {
    await wharf?.close();
  });

  it("creates a rule exactly as asked; the password is sealed, never returned nor evented", async () => {
    const created = await create("to-mirror");
    assert.deepEqual(
      { ...created, uid: undefined, createTime: undefined, updateTime: undefined },
      {
        uid: undefined,
        name: "to-mirror",
        direction: "PUSH",
        remote: { url: "http://127.0.0.1:9/team", username: "bot", hasPassword: true },
        repoPattern: "apps/**",
        tagPattern: "v*",
        destination: "mirror",
        trigger: "MANUAL",
        enabled: true,
        createTime: undefined,
        updateTime: undefined,
      },
    );
    assert.match(created.uid, new RegExp(`^${org}/[0-9a-f]{16}$`));
    const got = await expectJson<Record<string, unknown>>(
      await api(`/registry/v2/replicationRules/${created.uid}`),
    );
    assert.deepEqual(got, created);
    const stored = await wharf.store.replication.getRule(created.uid);
    assert.ok(stored && stored.remotePassword !== "" && !stored.remotePassword.includes("s3cret-pw"));
    const events = await wharf.store.events.pending(
      (
        await wharf.store.subscriptions.list(
          { uidp: { descendantsOf: org } },
          { order: { field: "uid", desc: false }, skip: 0, limit: 10 },
        )
      ).rows[0]?.uid ?? "",
      100,
    );
    const ruleEvents = events.filter(
      (e) => e.event.type === "dev.wharf.api.registry.replication_rule.created.v1",
    );
    assert.equal(ruleEvents.length, 1);
    assert.ok(!ruleEvents[0]?.event.data.includes("s3cret-pw"), "the event has no password");
    assert.ok(ruleEvents[0]?.event.data.includes('"hasPassword":true'));
    assert.ok(!JSON.stringify(wharf.logLines).includes("s3cret-pw"), "no log line has it");
  });

  it("enables a rule created without `enabled`, and answers `enabled: false` when disabled", async () => {
    const body = rule("default-enabled");
    delete (body as { enabled?: boolean }).enabled;
    const created = await expectJson<{ uid: string; enabled?: boolean }>(
      await api(`/registry/v2/replicationRules/${org}`, { method: "POST", body }),
    );
    assert.equal(created.enabled, true);
    const disabled = await expectJson<{ enabled?: boolean }>(
      await api(`/registry/v2/replicationRules/${created.uid}?updateMask=enabled`, {
        method: "PATCH",
        body: { enabled: false },
      }),
    );
    assert.equal(disabled.enabled, false);
  });

  it("refuses bad input, naming the field", async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ["Bad Name", {}, "name"],
      ["x", { direction: "DIRECTION_UNSPECIFIED" }, "direction"],
      ["x", { trigger: "TRIGGER_UNSPECIFIED" }, "trigger"],
      ["x", { direction: "PULL", trigger: "ON_PUSH" }, "trigger"],
      ["x", { trigger: "INTERVAL" }, "interval"],
      ["x", { trigger: "INTERVAL", interval: "30s" }, "interval"],
      ["x", { trigger: "INTERVAL", interval: "soon" }, "interval"],
      ["x", { trigger: "MANUAL", interval: "5m" }, "interval"],
      ["x", { repoPattern: "a b" }, "repo_pattern"],
      ["x", { repoPattern: "!apps" }, "repo_pattern"],
      ["x", { tagPattern: "v/1" }, "tag_pattern"],
      ["x", { destination: "/mirror" }, "destination"],
      ["x", { destination: "Mirror" }, "destination"],
      ["x", { remote: { url: "" } }, "remote.url"],
      ["x", { remote: { url: "ftp://127.0.0.1/x" } }, "remote.url"],
      ["x", { remote: { url: "http://user:pw@127.0.0.1:9" } }, "remote.url"],
      ["x", { remote: { url: "https://169.254.169.254/" } }, "remote.url"],
      ["x", { remote: { url: "http://127.0.0.1:9", username: "a:b" } }, "remote.username"],
    ];
    for (const [name, over, field] of cases) {
      const res = await api(`/registry/v2/replicationRules/${org}`, {
        method: "POST",
        body: rule(name, over),
      });
      const body = await violation(res, 400);
      assert.equal(fieldOf(body), field, `${JSON.stringify(over)}: ${body.message}`);
    }
    await create("dup");
    const dup = await api(`/registry/v2/replicationRules/${org}`, { method: "POST", body: rule("dup") });
    assert.equal(dup.status, 409, await dup.text());
    // A folder is not an organization.
    const inFolder = await api(`/registry/v2/replicationRules/${folder}`, {
      method: "POST",
      body: rule("f"),
    });
    assert.equal(inFolder.status, 404, await inFolder.text());
  });

  it("updates by mask; the password stays unless given, and can be cleared by naming it", async () => {
    const created = await create("upd");
    const patch = (body: unknown, mask: string) =>
      api(`/registry/v2/replicationRules/${created.uid}?updateMask=${mask}`, { method: "PATCH", body });
    const renamed = await expectJson<Record<string, unknown>>(
      await patch({ name: "upd2", trigger: "INTERVAL", interval: "5m" }, "name,trigger,interval"),
    );
    assert.equal(renamed.name, "upd2");
    assert.equal(renamed.trigger, "INTERVAL");
    assert.equal(renamed.interval, "5m");
    assert.ok(
      (await wharf.store.replication.getRule(created.uid))?.nextRunTime,
      "an INTERVAL rule is scheduled",
    );
    const url = await expectJson<{ remote: Record<string, unknown> }>(
      await patch({ remote: { url: "http://127.0.0.1:10", username: "other" } }, "remote"),
    );
    assert.deepEqual(url.remote, { url: "http://127.0.0.1:10", username: "other", hasPassword: true });
    const cleared = await expectJson<{ remote: Record<string, unknown> }>(
      await patch({ remote: { password: "" } }, "remote.password"),
    );
    // hasPassword false is proto JSON's default: left out.
    assert.deepEqual(cleared.remote, { url: "http://127.0.0.1:10", username: "other" });
    const manual = await expectJson<Record<string, unknown>>(await patch({ trigger: "MANUAL" }, "trigger"));
    assert.equal(manual.interval, undefined, "leaving INTERVAL drops the interval");
    assert.equal((await wharf.store.replication.getRule(created.uid))?.nextRunTime, undefined);
    const bad = await violation(
      await patch({ direction: "PULL", trigger: "ON_PUSH" }, "direction,trigger"),
      400,
    );
    assert.equal(fieldOf(bad), "trigger");
    const badMask = await violation(await patch({}, "remote.secret"), 400);
    assert.equal(fieldOf(badMask), "update_mask");
    const taken = await patch({ name: "to-mirror" }, "name");
    assert.equal(taken.status, 409, await taken.text());
  });

  it("runs a rule: the copier gets the rule with its password opened; progress and outcome are recorded", async () => {
    const created = await create("runs-ok");
    const queued = await expectJson<Run>(
      await api(`/registry/v2/replicationRules/${created.uid}:run`, { method: "POST", body: {} }),
    );
    assert.equal(queued.rule, created.uid);
    assert.ok(["QUEUED", "RUNNING"].includes(queued.state));
    assert.equal(queued.trigger, "MANUAL");
    const done = await ended(queued.uid);
    assert.equal(done.state, "SUCCEEDED");
    assert.equal(done.copiedManifests, "1");
    assert.equal(done.copiedBlobs, "1");
    assert.equal(done.copiedBytes, "300");
    assert.equal(done.skippedBlobs, "1");
    assert.ok(done.startTime && done.endTime);
    const call = calls.find((c) => c.uid === created.uid);
    assert.deepEqual(call, {
      uid: created.uid,
      orgUid: org,
      orgName: "acme",
      name: "runs-ok",
      direction: "PUSH",
      remote: { url: "http://127.0.0.1:9/team", username: "bot", password: "s3cret-pw" },
      repoPattern: "apps/**",
      tagPattern: "v*",
      destination: "mirror",
    });
    const listed = await expectJson<{ runs: Run[]; totalCount: string }>(
      await api(`/registry/v2/replicationRuns?rule=${created.uid}`),
    );
    assert.deepEqual(
      listed.runs.map((r) => r.uid),
      [queued.uid],
    );
    assert.equal(listed.totalCount, "1");
    const metrics = await (await api("/metrics")).text();
    assert.match(metrics, /wharf_replication_copied_bytes_total \d+/);
    assert.match(metrics, /wharf_replication_runs_total\{outcome="succeeded"\} [1-9]/);
  });

  it("runs one run per rule at a time; triggers while it runs coalesce into one more; progress shows while running", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let started = 0;
    behaviours.set("slow", async (_rule, progress) => {
      started++;
      progress.add({ copiedBytes: 1234, copiedBlobs: 1 });
      await gate;
    });
    const created = await create("slow");
    const run = async () =>
      expectJson<Run>(
        await api(`/registry/v2/replicationRules/${created.uid}:run`, { method: "POST", body: {} }),
      );
    const first = await run();
    const running = await until("the first run to report progress", async () => {
      const r = await runOf(first.uid);
      return r.state === "RUNNING" && r.copiedBytes === "1234" ? r : undefined;
    });
    assert.equal(running.copiedBlobs, "1");
    const second = await run();
    const third = await run();
    assert.equal(second.state, "QUEUED");
    assert.equal(third.uid, second.uid, "coalesced with the queued run");
    release();
    assert.equal((await ended(first.uid)).state, "SUCCEEDED");
    assert.equal((await ended(second.uid)).state, "SUCCEEDED");
    assert.equal(started, 2);
    const listed = await expectJson<{ runs: Run[] }>(
      await api(`/registry/v2/replicationRuns?rule=${created.uid}`),
    );
    assert.deepEqual(
      listed.runs.map((r) => r.uid),
      [second.uid, first.uid],
      "newest first",
    );
  });

  it("records failures: FAILED with the first 100 and how many more; a copier that throws adds its reason", async () => {
    behaviours.set("many-failures", async (_rule, progress) => {
      for (let i = 0; i < 150; i++)
        progress.failed({ reference: `acme/apps/x:v${i}`, message: "remote said 500" });
    });
    behaviours.set("throws", async () => {
      throw new Error("remote unreachable: connection refused");
    });
    const many = await create("many-failures");
    const m = await ended(
      (
        await expectJson<Run>(
          await api(`/registry/v2/replicationRules/${many.uid}:run`, { method: "POST", body: {} }),
        )
      ).uid,
    );
    assert.equal(m.state, "FAILED");
    assert.equal(m.errors?.length, 100);
    assert.equal(m.errorsOmitted, "50");
    assert.deepEqual(m.errors?.[0], { reference: "acme/apps/x:v0", message: "remote said 500" });
    const throws = await create("throws");
    const t = await ended(
      (
        await expectJson<Run>(
          await api(`/registry/v2/replicationRules/${throws.uid}:run`, { method: "POST", body: {} }),
        )
      ).uid,
    );
    assert.equal(t.state, "FAILED");
    assert.deepEqual(t.errors, [
      { reference: "http://127.0.0.1:9/team", message: "remote unreachable: connection refused" },
    ]);
  });

  it("ON_PUSH queues a run for a push of a matching repo and tag only", async () => {
    const created = await create("on-push", { trigger: "ON_PUSH", repoPattern: "apps/*", tagPattern: "v*" });
    const token = await wharf.registryToken();
    const runsOfRule = async () =>
      (await expectJson<{ runs?: Run[] }>(await api(`/registry/v2/replicationRuns?rule=${created.uid}`)))
        .runs ?? [];
    await pushImage(wharf, "acme/apps/web", "latest", token, "no-match-tag");
    await pushImage(wharf, "acme/other", "v1", token, "no-match-repo");
    await pushImage(wharf, "acme/apps/web", "v1", token, "match");
    const run = await until("an ON_PUSH run", async () => (await runsOfRule())[0]);
    assert.equal(run.trigger, "ON_PUSH");
    assert.equal((await ended(run.uid)).state, "SUCCEEDED");
    // Give the trigger a few polls: the non-matching pushes queue nothing more.
    await until("the cursor to pass every push", async () => {
      const read = await wharf.store.replication.pushEvents(org, 100);
      return read && read.events.length === 0 ? true : undefined;
    });
    assert.equal((await runsOfRule()).length, 1);
  });

  it("INTERVAL fires a due rule once, then one interval later", async () => {
    const created = await create("ticking", { trigger: "INTERVAL", interval: "1h" });
    const stored = await wharf.store.replication.getRule(created.uid);
    assert.ok(
      stored?.nextRunTime && stored.nextRunTime > Date.now() + 3_500_000,
      "first run one interval on",
    );
    // Due now (as an hour later would be).
    await wharf.store.replication.updateRule({ ...stored, nextRunTime: Date.now() - 1 });
    const runs = async () =>
      (await expectJson<{ runs?: Run[] }>(await api(`/registry/v2/replicationRuns?rule=${created.uid}`)))
        .runs ?? [];
    const run = await until("an INTERVAL run", async () => (await runs())[0]);
    assert.equal(run.trigger, "INTERVAL");
    assert.equal((await ended(run.uid)).state, "SUCCEEDED");
    const next = (await wharf.store.replication.getRule(created.uid))?.nextRunTime ?? 0;
    assert.ok(next > Date.now() + 3_500_000, "the next firing is an interval on");
    assert.equal((await runs()).length, 1);
  });

  it("keeps other organizations out: B's owner cannot read, change, run or list A's rules and runs", async () => {
    const created = await create("private");
    const run = await expectJson<Run>(
      await api(`/registry/v2/replicationRules/${created.uid}:run`, { method: "POST", body: {} }),
    );
    await ended(run.uid);
    for (const [method, path, body] of [
      ["GET", `/registry/v2/replicationRules/${created.uid}`, undefined],
      ["PATCH", `/registry/v2/replicationRules/${created.uid}`, { tagPattern: "x" }],
      ["DELETE", `/registry/v2/replicationRules/${created.uid}`, undefined],
      ["POST", `/registry/v2/replicationRules/${created.uid}:run`, {}],
      ["GET", `/registry/v2/replicationRuns/${run.uid}`, undefined],
      ["POST", `/registry/v2/replicationRules/${org}`, rule("b")],
    ] as const) {
      const res = await api(path, { method, token: ownerB, body });
      assert.equal(res.status, 403, `${method} ${path}: ${await res.text()}`);
    }
    const rules = await expectJson<{ replicationRules?: unknown[] }>(
      await api("/registry/v2/replicationRules", { token: ownerB }),
    );
    assert.deepEqual(rules.replicationRules ?? [], []);
    const runs = await expectJson<{ runs?: unknown[] }>(
      await api(`/registry/v2/replicationRuns?rule=${created.uid}`, { token: ownerB }),
    );
    assert.deepEqual(runs.runs ?? [], []);
    assert.ok(orgB);
  });

  it("deletes a rule with its runs", async () => {
    const created = await create("gone");
    const run = await expectJson<Run>(
      await api(`/registry/v2/replicationRules/${created.uid}:run`, { method: "POST", body: {} }),
    );
    await ended(run.uid);
    assert.equal(
      (await api(`/registry/v2/replicationRules/${created.uid}`, { method: "DELETE" })).status,
      200,
    );
    assert.equal((await api(`/registry/v2/replicationRules/${created.uid}`)).status, 404);
    assert.equal((await api(`/registry/v2/replicationRuns/${run.uid}`)).status, 404);
    assert.equal(
      (await api(`/registry/v2/replicationRules/${created.uid}`, { method: "DELETE" })).status,
      404,
    );
  });
});
