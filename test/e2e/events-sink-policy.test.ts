import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { newChildUid } from "../../src/core/uidp.js";
import { BadRequestSchema, ErrorInfoSchema } from "../../src/gen/google/rpc/error_details_pb.js";
import { SubscriptionsService } from "../../src/gen/platform/events/v2/subscriptions_pb.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import { onOneEngine } from "../support/databases.js";
import { fakeSinkResolver, NO_DELIVERY } from "../support/sink-dns.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { WHARF } from "../support/wharf-process.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const run = promisify(execFile);
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const FAST_RETRIES = { backoffBaseMs: 40, backoffMaxMs: 200, pollMs: 50 };

interface DeliveryJson {
  state?: string;
  attempts?: string;
  lastStatus?: number;
  lastError?: string;
  eventType?: string;
}

/** Polls the subscription's dead letters until there is one (the attempts run out quickly here). */
async function deadLetterOf(server: TestServer, subscription: string): Promise<DeliveryJson> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const page = await expectJson<{ deliveries?: DeliveryJson[] }>(
      await server.api(`/events/v2/deliveries?subscription_uid=${subscription}&state=failed`, {
        token: server.adminToken,
      }),
    );
    const [first] = page.deliveries ?? [];
    if (first) return first;
    assert.ok(Date.now() < deadline, "the delivery was given up on");
    await pause(50);
  }
}

describe("webhook sinks cannot reach internal addresses (REST and gRPC)", () => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let org: string;
  /** Sinks refused at create time, and what the refusal says. */
  let refused: [string, RegExp][];

  before(async () => {
    // The default settings (no loopback, no exceptions), the system resolver (localhost comes from
    // /etc/hosts), and a server that never delivers: the private sink accepted below is no receiver.
    server = await startTestServer({ events: NO_DELIVERY });
    receiver = await startWebhookReceiver();
    org = await server.create("/iam/v2/groups", { name: "acme" });
    const port = new URL(receiver.url()).port;
    refused = [
      [
        "https://169.254.169.254/x",
        /sink host 169\.254\.169\.254 is a cloud metadata address.*--events-sink-allow/,
      ],
      ["https://2852039166/x", /sink host 169\.254\.169\.254 is a cloud metadata address/],
      ["https://[::ffff:169.254.169.254]/x", /sink host ::ffff:a9fe:a9fe is a cloud metadata address/],
      ["https://100.100.100.200/x", /cloud metadata address/],
      [
        `http://127.0.0.1:${port}/hook`,
        /sink host 127\.0\.0\.1 is a loopback address.*--events-allow-loopback/,
      ],
      [`http://[::1]:${port}/hook`, /sink host ::1 is a loopback address/],
      [`http://localhost:${port}/hook`, /sink host localhost resolves to 127\.0\.0\.1, a loopback address/],
      ["https://169.254.10.10/x", /link-local address/],
      ["https://[fe80::1]/x", /link-local address/],
      ["https://0.0.0.0/x", /unspecified address/],
      ["https://239.255.255.250/x", /multicast address/],
    ];
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });

  async function subscriptionsOfOrg(): Promise<{ uid: string; sink: string }[]> {
    const list = await expectJson<{ subscriptions?: { uid: string; sink: string }[] }>(
      await server.api(`/events/v2/subscriptions?uidp.descendants_of=${org}`, { token: server.adminToken }),
    );
    return list.subscriptions ?? [];
  }

  it("REST: INVALID_ARGUMENT with a violation on sink saying why, and nothing created", async () => {
    for (const [sink, why] of refused) {
      const body = await expectError(
        await server.api(`/events/v2/subscriptions/${org}`, {
          method: "POST",
          token: server.adminToken,
          body: { sink },
        }),
        { status: 400, code: 3, reason: "INVALID_ARGUMENT", field: "sink" },
      );
      assert.match(body.message, why, sink);
    }
    assert.deepEqual(await subscriptionsOfOrg(), [], "nothing was created");
    assert.equal(receiver.received.length, 0, "nothing was sent to the loopback receiver");
  });

  it("gRPC: INVALID_ARGUMENT with ErrorInfo and a BadRequest violation on sink", async () => {
    const client = createClient(SubscriptionsService, createGrpcTransport({ baseUrl: server.apiUrl }));
    const headers = { authorization: `Bearer ${server.adminToken}` };
    for (const [sink, why] of refused) {
      const err = await client.createSubscription({ parent: org, subscription: { sink } }, { headers }).then(
        () => assert.fail(`${sink} was accepted`),
        (e: unknown) => e,
      );
      assert.ok(err instanceof ConnectError, String(err));
      assert.equal(err.code, Code.InvalidArgument, sink);
      assert.equal(err.findDetails(ErrorInfoSchema)[0]?.reason, "INVALID_ARGUMENT");
      const [violation] = err.findDetails(BadRequestSchema)[0]?.fieldViolations ?? [];
      assert.equal(violation?.field, "sink", sink);
      assert.match(violation?.description ?? "", why, sink);
    }
    assert.deepEqual(await subscriptionsOfOrg(), [], "nothing was created");
  });

  it("a private-range sink is accepted (on-premises receivers), over REST and gRPC", async () => {
    const rest = await expectJson<{ uid: string; sink: string }>(
      await server.api(`/events/v2/subscriptions/${org}`, {
        method: "POST",
        token: server.adminToken,
        body: { sink: "https://10.1.2.3/hook" },
      }),
    );
    assert.equal(rest.sink, "https://10.1.2.3/hook");
    const client = createClient(SubscriptionsService, createGrpcTransport({ baseUrl: server.apiUrl }));
    const headers = { authorization: `Bearer ${server.adminToken}` };
    const grpc = await client.createSubscription(
      { parent: org, subscription: { sink: "https://[fd12:3456::7]/hook" } },
      { headers },
    );
    assert.equal(grpc.sink, "https://[fd12:3456::7]/hook");
    // This server leases no lane, so neither subscription's own created event is ever sent.
    await pause(300);
    for (const uid of [rest.uid, grpc.uid]) {
      const pending = await expectJson<{ deliveries?: DeliveryJson[] }>(
        await server.api(`/events/v2/deliveries?subscription_uid=${uid}`, { token: server.adminToken }),
      );
      // The first subscription also owes the second one's created event.
      assert.ok((pending.deliveries?.length ?? 0) >= 1, "its created event is owed");
      for (const delivery of pending.deliveries ?? []) {
        assert.equal(delivery.attempts ?? "0", "0", `${delivery.eventType} was never attempted`);
      }
      const deleted = await server.api(`/events/v2/subscriptions/${uid}`, {
        method: "DELETE",
        token: server.adminToken,
      });
      assert.equal(deleted.status, 200);
    }
  });
});

onOneEngine("webhook sinks: the address connected to is checked again", (db) => {
  let receiver: WebhookReceiver;
  const servers: TestServer[] = [];

  before(async () => {
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    for (const server of servers) await server.close();
    await receiver.close();
  });

  async function serverWith(opts: Parameters<typeof startTestServer>[0]): Promise<TestServer> {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    const server = await startTestServer({ ...opts, ...(databaseUrl ? { databaseUrl } : {}) });
    servers.push(server);
    return server;
  }

  it("DNS rebinding: a sink allowed at create time whose name now resolves to loopback is refused, retried and dead-lettered", async () => {
    // Simulated DNS (this machine has none to change, and must not send beyond loopback): the
    // create-time lookup answers a public address, every later one the loopback receiver, as an
    // attacker's DNS server would. Were the connect-time check missing, the receiver would get it.
    let lookups = 0;
    const resolve = fakeSinkResolver({
      "rebind.example.com": () => (++lookups === 1 ? ["203.0.113.10"] : ["127.0.0.1"]),
    });
    const server = await serverWith({
      resolveSinkHost: resolve,
      events: FAST_RETRIES,
      config: { eventsMaxAttempts: "2", eventsAllowHttp: "true" },
    });
    const org = await server.create("/iam/v2/groups", { name: "acme" });
    const port = new URL(receiver.url()).port;
    const sub = await server.create(`/events/v2/subscriptions/${org}`, {
      sink: `http://rebind.example.com:${port}/rebind`,
    });
    const dead = await deadLetterOf(server, sub);
    assert.equal(dead.eventType, "dev.wharf.api.events.subscription.created.v1", "its created event");
    assert.equal(dead.attempts, "2", "attempted as often as allowed");
    assert.equal(dead.lastStatus ?? 0, 0, "no HTTP status: no connection was made");
    assert.match(
      dead.lastError ?? "",
      /^SinkAddressRefused: sink host rebind\.example\.com resolves to 127\.0\.0\.1, a loopback address/,
    );
    assert.ok(lookups >= 3, `resolved at create time and at each attempt (${lookups})`);
    assert.deepEqual(
      receiver.received.filter((d) => d.path === "/rebind"),
      [],
      "nothing reached the address the name rebound to",
    );
  });

  it("a sink stored before the policy (or under looser settings) is refused by the delivery thread", async () => {
    const server = await serverWith({ events: FAST_RETRIES, config: { eventsMaxAttempts: "2" } });
    const org = await server.create("/iam/v2/groups", { name: "acme" });
    const sub = newChildUid(org);
    await server.store.subscriptions.insert({
      uid: sub,
      groupUid: org,
      sink: receiver.url("/stored"),
      createTime: Date.now(),
    });
    await server.create(`/registry/v2/repos/${org}`, { name: "app" });
    const dead = await deadLetterOf(server, sub);
    assert.equal(dead.eventType, "dev.wharf.api.registry.repo.created.v1", "the repo's event");
    assert.match(dead.lastError ?? "", /^SinkAddressRefused: sink host 127\.0\.0\.1 is a loopback address/);
    assert.deepEqual(
      receiver.received.filter((d) => d.path === "/stored"),
      [],
      "nothing reached the loopback receiver",
    );
  });
});

describe("sink address settings at start-up", () => {
  it("a bad --events-sink-allow stops `wharf serve` with exit code 2 and the config error", async () => {
    for (const [args, env] of [
      [["--events-sink-allow", "10.0.0.0/33"], {}],
      [[], { WHARF_EVENTS_SINK_ALLOW: "10.0.0.0/8,metadata" }],
      [["--events-allow-loopback", "maybe"], {}],
    ] as const) {
      await assert.rejects(
        run(
          process.execPath,
          [WHARF, "serve", "--api-addr", "127.0.0.1:0", "--registry-addr", "127.0.0.1:0", ...args],
          {
            env: { ...process.env, ...env },
          },
        ),
        (err: { code: number; stderr: string }) => {
          assert.equal(err.code, 2, `exit code for ${JSON.stringify([args, env])}`);
          assert.match(
            err.stderr,
            /--events-(sink-allow must be a comma-separated list of CIDRs|allow-loopback must be true or false)/,
          );
          return true;
        },
      );
    }
  });
});
