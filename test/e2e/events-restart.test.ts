import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import {
  adminTokenOf,
  createVia,
  serveProcess,
  stopProcess,
  type WharfProcess,
} from "../support/wharf-process.js";

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("event delivery survives a killed server", () => {
  let dataDir: string;
  let receiver: WebhookReceiver;
  const servers: WharfProcess[] = [];

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "wharf-events-restart-"));
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    for (const server of servers) await stopProcess(server, "SIGKILL");
    await receiver.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("a server killed (SIGKILL) mid-delivery leaves nothing behind: the restarted one delivers the rest", async () => {
    // The default 60 s lease: the restarted process takes over once the killed one's heartbeat is
    // stale (3 s), within the 20 s this test waits. (The receiver listens on loopback, which sinks
    // may reach only when the server allows it.)
    const env = { WHARF_EVENTS_TIMEOUT: "1s", WHARF_EVENTS_ALLOW_LOOPBACK: "true" };
    const first = await serveProcess(dataDir, env);
    servers.push(first);
    const token = await adminTokenOf(dataDir, first.apiUrl);
    const org = await createVia(first.apiUrl, token, "/iam/v2/groups", { name: "acme" });
    receiver.respondWith("hang");
    await createVia(first.apiUrl, token, `/events/v2/subscriptions/${org}`, { sink: receiver.url() });
    const repos: string[] = [];
    for (let i = 0; i < 5; i++)
      repos.push(await createVia(first.apiUrl, token, `/registry/v2/repos/${org}`, { name: `r${i}` }));
    const deadline = Date.now() + 10_000;
    while (receiver.received.length === 0) {
      assert.ok(Date.now() < deadline, "the first delivery started");
      await pause(20);
    }
    await stopProcess(first, "SIGKILL");
    assert.equal(receiver.accepted().length, 0, "nothing was acknowledged before the kill");

    receiver.respondWith(200);
    const second = await serveProcess(dataDir, env);
    servers.push(second);
    const got = await receiver.waitFor(
      (a) => repos.every((uid) => a.some((d) => d.headers["ce-subject"] === uid)),
      20_000,
    );
    const types = got.map((d) => d.headers["ce-type"]);
    assert.ok(
      types.includes("dev.wharf.api.events.subscription.created.v1"),
      "the in-flight event is re-sent",
    );
    const repoSubjects = got
      .filter((d) => d.headers["ce-type"] === "dev.wharf.api.registry.repo.created.v1")
      .map((d) => d.headers["ce-subject"]);
    assert.deepEqual(repoSubjects, repos, "every change is delivered once, in order, after the restart");
  });
});
