import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it, type TestContext } from "node:test";
import pg from "pg";
import { createTestDatabase, engineSkipReason, type TestDatabase } from "../support/databases.js";
import {
  type ReceivedDelivery,
  startWebhookReceiver,
  type WebhookReceiver,
} from "../support/webhook-receiver.js";
import {
  adminTokenOf,
  createVia,
  serveProcess,
  stopProcess,
  type WharfProcess,
} from "../support/wharf-process.js";

// A killed server's webhook lanes move to a live one within 5 s (ADR 0037): dispatchers heart-beat
// in `dispatcher_owners`, and a lane whose owner went silent is leased before its 60 s lease ends.
// Servers run with the default lease and time limit; the receiver answers slowly, so a batch is
// in flight when the holder is killed.

/** The target: from the kill to the next delivery by another process. */
const TAKEOVER_LIMIT_MS = 5_000;
/**
 * A restarted server on the same host takes a dead predecessor's lanes at its first heartbeat
 * (about 1 s idle; CI's loaded run took 2.04 s): the bound tells that apart from the 60 s lease.
 */
const RESTART_TAKEOVER_LIMIT_MS = 5_000;
/** The dispatcher's default batch: what a dead holder may have sent without recording it. */
const BATCH_SIZE = 100;
const REPOS = 40;
/** Each delivery is answered this long after it arrived: 40 take ~6 s, one batch. */
const ANSWER_DELAY_MS = 150;
const REPO_CREATED = "dev.wharf.api.registry.repo.created.v1";

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 20_000) {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    assert.ok(performance.now() < deadline, `timed out waiting until ${what}`);
    await pause(20);
  }
}

/** The pids of the processes whose dispatchers hold a lane, from the database (`query` runs SQL). */
async function laneHolders(query: (text: string) => Promise<{ pid: unknown }[]>): Promise<number[]> {
  const rows = await query(
    "select o.pid from subscriptions s join dispatcher_owners o on o.owner = s.lease_owner where s.lease_owner <> ''",
  );
  return rows.map((r) => Number(r.pid));
}

/**
 * Kills `victim` (SIGKILL) and measures the time from the kill to the first delivery arriving on
 * a connection the victim was not using: the takeover.
 */
async function killAndMeasure(
  receiver: WebhookReceiver,
  victim: WharfProcess,
  restart?: () => Promise<unknown>,
) {
  const killedAt = performance.now();
  // The victim's keep-alive connections: the ports its last deliveries came from.
  const victimPorts = new Set(
    receiver.received.filter((r) => r.arrivedAt > killedAt - 2_000).map((r) => r.remotePort),
  );
  const before = receiver.received.length;
  await stopProcess(victim, "SIGKILL");
  await restart?.();
  let next: ReceivedDelivery | undefined;
  await until(
    "a delivery after the kill",
    () => {
      next = receiver.received
        .slice(before)
        .find((r) => r.arrivedAt > killedAt && !victimPorts.has(r.remotePort));
      return next !== undefined;
    },
    60_000,
  );
  return (next as ReceivedDelivery).arrivedAt - killedAt;
}

/** Asserts every repo's event was accepted, and returns the number of duplicate deliveries. */
async function allDelivered(receiver: WebhookReceiver, repos: readonly string[]): Promise<number> {
  const got = await receiver.waitFor(
    (a) => repos.every((uid) => a.some((d) => d.headers["ce-subject"] === uid)),
    60_000,
  );
  const ids = got.map((d) => String(d.headers["ce-id"]));
  return ids.length - new Set(ids).size;
}

function report(t: TestContext, figures: Record<string, number>) {
  t.diagnostic(
    Object.entries(figures)
      .map(([k, v]) => `${k}=${Math.round(v)}`)
      .join(" "),
  );
}

describe("webhook lanes of a killed replica are taken over within 5 s [postgres]", {
  skip: engineSkipReason("postgres"),
}, () => {
  let db: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;
  let receiver: WebhookReceiver;
  let sql: pg.Client;
  const servers: WharfProcess[] = [];
  const tokens = new Map<WharfProcess, string>();
  let org: string;

  const start = async () => {
    const server = await serveProcess(dataDir, env);
    servers.push(server);
    tokens.set(server, await adminTokenOf(dataDir, server.apiUrl, { env }));
    return server;
  };
  const alive = () => servers.filter((s) => s.child.exitCode === null && s.child.signalCode === null);

  before(async () => {
    db = createTestDatabase("postgres");
    const url = (await db.options()).databaseUrl as string;
    // Both replicas share the database and the data directory, as replicas share storage.
    env = { WHARF_DATABASE_URL: url, WHARF_EVENTS_ALLOW_LOOPBACK: "true" };
    dataDir = await mkdtemp(join(tmpdir(), "wharf-events-takeover-"));
    receiver = await startWebhookReceiver();
    const first = await start();
    await start();
    sql = new pg.Client({ connectionString: url });
    await sql.connect();
    const token = tokens.get(first) as string;
    org = await createVia(first.apiUrl, token, "/iam/v2/groups", { name: "acme" });
    await createVia(first.apiUrl, token, `/events/v2/subscriptions/${org}`, { sink: receiver.url() });
  });
  after(async () => {
    for (const server of servers) await stopProcess(server, "SIGKILL");
    await sql?.end();
    await receiver.close();
    await db.dispose();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("kill -9 of the replica holding the lane: the other delivers within 5 s, everything, few duplicates", async (t) => {
    receiver.respondWith(200, ANSWER_DELAY_MS);
    const [one] = alive();
    assert.ok(one);
    const repos: string[] = [];
    for (let i = 0; i < REPOS; i++) {
      repos.push(
        await createVia(one.apiUrl, tokens.get(one) as string, `/registry/v2/repos/${org}`, {
          name: `r${i}`,
        }),
      );
    }
    await until("deliveries are in flight", () => receiver.received.length >= 5);
    const holders = await laneHolders(async (text) => (await sql.query(text)).rows);
    assert.equal(holders.length, 1, "one replica holds the lane");
    const victim = alive().find((s) => s.child.pid === holders[0]);
    assert.ok(victim, `the holder (pid ${holders[0]}) is one of the replicas`);
    const deliveredBeforeKill = receiver.received.length;

    const takeoverMs = await killAndMeasure(receiver, victim);
    const duplicates = await allDelivered(receiver, repos);
    report(t, { takeoverMs, deliveredBeforeKill, received: receiver.received.length, duplicates });
    assert.ok(
      takeoverMs < TAKEOVER_LIMIT_MS,
      `the survivor delivered ${Math.round(takeoverMs)} ms after the kill`,
    );
    assert.ok(duplicates <= BATCH_SIZE, `duplicates (${duplicates}) at most the dead holder's batch`);
    assert.ok(duplicates >= 1, "the delivery in flight at the kill is sent again (at-least-once)");
  });

  it("a live replica that is slow to deliver keeps its lane: no second sender while it heart-beats", async () => {
    await start();
    assert.equal(alive().length, 2, "two replicas again");
    // Longer than a heartbeat takes to go stale (3 s), shorter than the time limit (10 s).
    receiver.respondWith(200, 6_000);
    const answeredBefore = receiver.answered();
    const [one] = alive();
    assert.ok(one);
    const repo = await createVia(one.apiUrl, tokens.get(one) as string, `/registry/v2/repos/${org}`, {
      name: "slow",
    });
    await until("the slow delivery is answered", () => receiver.answered() > answeredBefore, 30_000);
    const sent = receiver.received.filter((r) => r.headers["ce-subject"] === repo);
    assert.equal(sent.length, 1, "sent once: the other replica did not take the lane while its holder lived");
  });
});

describe("a restarted server takes over its killed predecessor's lane within 5 s [sqlite]", () => {
  let dataDir: string;
  let receiver: WebhookReceiver;
  const servers: WharfProcess[] = [];
  const env = { WHARF_EVENTS_ALLOW_LOOPBACK: "true" };

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "wharf-events-takeover-sqlite-"));
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    for (const server of servers) await stopProcess(server, "SIGKILL");
    await receiver.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("kill -9 mid-batch, restart on the same data: the restarted server delivers within 5 s of starting, not 60 s", async (t) => {
    const first = await serveProcess(dataDir, env);
    servers.push(first);
    const token = await adminTokenOf(dataDir, first.apiUrl);
    const org = await createVia(first.apiUrl, token, "/iam/v2/groups", { name: "acme" });
    receiver.respondWith(200, ANSWER_DELAY_MS);
    await createVia(first.apiUrl, token, `/events/v2/subscriptions/${org}`, { sink: receiver.url() });
    const repos: string[] = [];
    for (let i = 0; i < REPOS; i++) {
      repos.push(await createVia(first.apiUrl, token, `/registry/v2/repos/${org}`, { name: `r${i}` }));
    }
    await until("deliveries are in flight", () => receiver.received.length >= 5);
    const deliveredBeforeKill = receiver.received.length;
    let restartedInMs = 0;
    const takeoverMs = await killAndMeasure(receiver, first, async () => {
      const started = performance.now();
      servers.push(await serveProcess(dataDir, env));
      restartedInMs = performance.now() - started;
    });
    const duplicates = await allDelivered(receiver, repos);
    report(t, {
      takeoverMs,
      restartedInMs,
      deliveredBeforeKill,
      received: receiver.received.length,
      duplicates,
    });
    // From the kill, the restart's own start-up counts too (1–3 s idle, more on a loaded machine):
    // what the takeover adds is measured from when the restarted server is up.
    assert.ok(
      takeoverMs - restartedInMs < RESTART_TAKEOVER_LIMIT_MS,
      `the restarted server delivered ${Math.round(takeoverMs - restartedInMs)} ms after it was up (${Math.round(takeoverMs)} ms after the kill)`,
    );
    assert.ok(duplicates <= BATCH_SIZE, `duplicates (${duplicates}) at most the dead holder's batch`);
    const repoSubjects = receiver
      .accepted()
      .filter((d) => d.headers["ce-type"] === REPO_CREATED)
      .map((d) => String(d.headers["ce-subject"]));
    assert.deepEqual(
      [...new Set(repoSubjects)],
      repos,
      "every change is delivered, first deliveries in order",
    );
  });
});
