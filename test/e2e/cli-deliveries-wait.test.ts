import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { type CliRun, runWharf, startWharf } from "../support/wharf-process.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// `wharf events deliveries wait` against a real server delivering to real webhook receivers: one
// that answers (the deliveries drain) and one that keeps failing (retried: they stay pending).

async function waitUntil(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    assert.ok(Date.now() < deadline, what);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("wharf events deliveries wait", () => {
  let wharf: TestServer;
  let good: WebhookReceiver;
  let dead: WebhookReceiver;
  let goodSub: string;
  let deadSub: string;
  let org: string;
  let otherOrg: string;

  const cliEnv = (): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    WHARF_API_URL: wharf.apiUrl,
    WHARF_TOKEN: wharf.adminToken,
    WHARF_CONFIG_DIR: wharf.dataDir,
  });
  const wharfCli = (args: string[]): Promise<CliRun> => runWharf(args, cliEnv());

  before(async () => {
    wharf = await startTestServer({
      config: { eventsAllowLoopback: "true", eventsMaxAttempts: "50" },
      // Retries back off from 300 ms: a failing sink keeps its deliveries pending for the test.
      events: { backoffBaseMs: 300, backoffMaxMs: 1000, pollMs: 50 },
    });
    good = await startWebhookReceiver();
    dead = await startWebhookReceiver();
    org = await wharf.create("/iam/v2/groups", { name: "acme" });
    otherOrg = await wharf.create("/iam/v2/groups", { name: "other" });
    goodSub = await wharf.create(`/events/v2/subscriptions/${org}`, { sink: good.url() });
    dead.respondWith(500);
    deadSub = await wharf.create(`/events/v2/subscriptions/${otherOrg}`, { sink: dead.url() });
  });
  after(async () => {
    await wharf?.close();
    await good?.close();
    await dead?.close();
  });

  it("exits 0 once the subscription's deliveries are delivered, showing the pending count fall to 0", async () => {
    // The sink refuses at first, so the owed events queue up as pending deliveries.
    good.respondWith(503);
    for (const name of ["a", "b", "c"]) await wharf.create(`/registry/v2/repos/${org}`, { name });
    await waitUntil(() => good.received.length >= 1, "the sink was attempted");
    const waiting = startWharf(
      ["events", "deliveries", "wait", "--subscription", goodSub, "--timeout", "30s"],
      cliEnv(),
    );
    // Once it has shown deliveries pending, the retries may succeed.
    await waitUntil(
      () => /^wharf events deliveries wait: [1-9]\d* pending \(/m.test(waiting.output().stderr),
      "wharf events deliveries wait showed deliveries pending",
      30_000,
    );
    good.respondWith(200); // the retries now succeed
    const run = await waiting.finished;
    assert.equal(run.code, 0, run.stderr);
    const counts = run.stderr
      .split("\n")
      .flatMap((l) => /^wharf events deliveries wait: (\d+) pending \(/.exec(l)?.[1] ?? [])
      .map(Number);
    assert.ok((counts[0] ?? 0) >= 1, `it started with deliveries pending: ${run.stderr}`);
    assert.equal(counts.at(-1), 0, "and ended with none");
    assert.deepEqual(
      counts,
      [...counts].sort((a, b) => b - a),
      "the count only fell",
    );
    assert.match(run.stderr, /nothing pending in 1 subscription\n$/);
    assert.equal(run.stdout, "");
    assert.ok(!run.stderr.includes(String.fromCharCode(27)), "no control characters when piped");
    const delivered = good.accepted().filter((d) => String(d.headers["ce-type"]).includes("repo"));
    assert.ok(delivered.length >= 3, `the three repo events were delivered (${delivered.length})`);
  });

  it("exits 1 at --timeout naming the subscription whose sink keeps failing, with its pending count", async () => {
    await wharf.create(`/registry/v2/repos/${otherOrg}`, { name: "owed" });
    // Once the sink has refused an attempt, its deliveries are queued (and pending) for sure.
    await waitUntil(() => dead.received.length >= 1, "the dead sink was attempted");
    const started = Date.now();
    const run = await wharfCli(["events", "deliveries", "wait", "--timeout", "2s"]);
    const took = Date.now() - started;
    assert.equal(run.code, 1, run.stderr);
    assert.ok(took >= 2000, `waited the whole timeout (${took} ms)`);
    assert.match(
      run.stderr,
      /^wharf events deliveries wait: [1-9]\d* pending /m,
      "the pending count is shown",
    );
    assert.match(run.stderr, /^wharf: timed out with [1-9]\d* deliveries pending:$/m);
    const named = run.stderr.split("\n").filter((l) => l.startsWith("  "));
    assert.deepEqual(
      named.map((l) => l.split(" ")[2]),
      [deadSub],
      "only the failing subscription is still pending",
    );
    assert.match(
      named[0] ?? "",
      new RegExp(`\\(${dead.url().replace(/[.?]/g, "\\$&")}\\): [1-9]\\d* pending, 0 given up`),
    );
    assert.ok(dead.received.length >= 2, "the dead sink was retried meanwhile");
  });

  it("bad input: an unknown subscription exits 4, a bad --timeout 2", async () => {
    const missing = await wharfCli([
      "events",
      "deliveries",
      "wait",
      "--subscription",
      `${org}/0123456789abcdef`,
    ]);
    assert.equal(missing.code, 4, missing.stderr);
    assert.match(missing.stderr, /^wharf: NOT_FOUND: /);
    const bad = await wharfCli(["events", "deliveries", "wait", "--timeout", "soon"]);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /--timeout must be a duration/);
  });
});
