import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { runCliInProcess } from "../support/cli-in-process.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import type { CliRun } from "../support/wharf-process.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// `wharf events deliveries redeliver`, `wharf events subscriptions redrive|replay` against a real
// server and webhook receiver: the receiver gets the same CloudEvent id again.

describe("wharf events redelivery verbs", () => {
  let wharf: TestServer;
  let receiver: WebhookReceiver;
  let org: string;
  let sub: string;

  const cli = (args: string[]): Promise<CliRun> =>
    runCliInProcess(args, {
      WHARF_API_URL: wharf.apiUrl,
      WHARF_TOKEN: wharf.adminToken,
      WHARF_CONFIG_DIR: wharf.dataDir,
    });
  const countOf = (id: string) => receiver.accepted().filter((d) => d.headers["ce-id"] === id).length;

  before(async () => {
    wharf = await startTestServer({
      config: { eventsAllowLoopback: "true" },
      events: { backoffBaseMs: 40, backoffMaxMs: 200, pollMs: 50 },
    });
    receiver = await startWebhookReceiver();
    org = await wharf.create("/iam/v2/groups", { name: "acme" });
    sub = await wharf.create(`/events/v2/subscriptions/${org}`, { sink: receiver.url() });
    await receiver.waitFor((a) => a.length === 1);
  });
  after(async () => {
    await wharf?.close();
    await receiver?.close();
  });

  it("redeliver, redrive and replay send the same CloudEvent again", async () => {
    const first = receiver.accepted()[0];
    const eventId = String(first?.headers["ce-id"]);
    const listed = await cli([
      "events",
      "deliveries",
      "list",
      "--subscription",
      sub,
      "--delivered",
      "-o",
      "json",
    ]);
    assert.equal(listed.code, 0, listed.stderr);
    const rows = JSON.parse(listed.stdout) as { uid: string; eventId: string; state: string }[];
    const delivered = rows.find((r) => r.eventId === eventId);
    assert.ok(delivered, `the subscription's creation is listed as delivered: ${listed.stdout}`);
    assert.equal(delivered.state, "delivered", "state");

    const again = await cli(["events", "deliveries", "redeliver", delivered.uid, "-o", "json"]);
    assert.equal(again.code, 0, again.stderr);
    const created = JSON.parse(again.stdout) as { eventId: string; redeliveryOf: string };
    assert.deepEqual([created.eventId, created.redeliveryOf], [eventId, delivered.uid], "the new delivery");
    await receiver.waitFor(() => countOf(eventId) === 2);

    const redrive = await cli(["events", "subscriptions", "redrive", sub]);
    assert.deepEqual([redrive.code, redrive.stdout], [0, "requeued 0 deliveries\n"], redrive.stderr);

    // Replay skips what is still owed or pending: wait until the lane recorded everything.
    const drained = await cli(["events", "deliveries", "wait", "--subscription", sub]);
    assert.equal(drained.code, 0, drained.stderr);
    const replay = await cli(["events", "subscriptions", "replay", sub, "--since", "2020-01-01T00:00:00Z"]);
    assert.equal(replay.code, 0, replay.stderr);
    assert.match(replay.stdout, /^requeued [1-9]\d* deliveries\n$/, "the kept events are requeued");
    await receiver.waitFor(() => countOf(eventId) === 3);

    const bad = await cli(["events", "subscriptions", "replay", sub, "--since", "yesterday"]);
    assert.equal(bad.code, 2, "a usage error");
    assert.match(bad.stderr, /--since must be an RFC 3339 time/, bad.stderr);
    const pending = await cli(["events", "deliveries", "redeliver", `${sub}/ffffffffffffffff`]);
    assert.equal(pending.code, 4, `an unknown delivery: ${pending.stderr}`);
  });
});
