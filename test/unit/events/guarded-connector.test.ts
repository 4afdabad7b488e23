import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createSinkAddressPolicy, NO_SINK_EXCEPTIONS } from "../../../src/events/sink-address-policy.js";
import { systemSinkResolver } from "../../../src/events/sink-host.js";
import { createWebhookSender } from "../../../src/events/webhook-sender.js";
import { fakeSinkResolver } from "../../support/sink-dns.js";
import { startWebhookReceiver } from "../../support/webhook-receiver.js";

const LOOPBACK_ALLOWED = createSinkAddressPolicy({ allow: [], allowLoopback: true });
const STRICT = createSinkAddressPolicy(NO_SINK_EXCEPTIONS);
/** Only the receivers' address is open: the rest of 127/8 stands for the refused addresses. */
const RECEIVERS_ONLY = createSinkAddressPolicy({ allow: ["127.0.0.1/32"], allowLoopback: false });

// Every address here, refused ones included, is on this machine: were a check missing, the
// connection would still not leave it (no test may send traffic beyond loopback). The ranges
// themselves are covered by sink-address-policy.test.ts.
describe("webhook sender: the address connected to is checked (connect time)", () => {
  it("refuses a loopback sink unless allowed, before connecting", async () => {
    const receiver = await startWebhookReceiver();
    const strict = createWebhookSender("wharf-test", { policy: STRICT, resolve: systemSinkResolver });
    const open = createWebhookSender("wharf-test", { policy: LOOPBACK_ALLOWED, resolve: systemSinkResolver });
    try {
      const port = new URL(receiver.url()).port;
      for (const sink of [receiver.url(), `http://localhost:${port}/hook`]) {
        const refused = await strict.send(sink, { "ce-id": "1" }, "{}", 2000);
        assert.equal(refused.ok, false, `${sink} fails`);
        assert.equal(refused.status, 0, "without a status");
        assert.match(
          refused.error,
          /^SinkAddressRefused: sink host (127\.0\.0\.1 is|localhost resolves to 127\.0\.0\.1,) a loopback address/,
          `${sink}: ${refused.error}`,
        );
      }
      assert.equal(receiver.received.length, 0, "nothing reached the receiver");
      const ok = await open.send(`http://localhost:${port}/hook`, { "ce-id": "2" }, "{}", 2000);
      assert.deepEqual(ok, { ok: true, status: 200, error: "" }, "allowed with --events-allow-loopback");
      assert.equal(receiver.received.length, 1);
    } finally {
      strict.close();
      open.close();
      await receiver.close();
    }
  });

  it("DNS rebinding: a name that now resolves to a refused address is refused as the socket connects", async () => {
    // Simulated DNS (this machine has none to change): the name first leads to the receiver, then
    // to a refused address (an attacker's DNS server would answer the metadata address).
    const receiver = await startWebhookReceiver();
    const port = new URL(receiver.url()).port;
    let answer = ["127.0.0.1"];
    const resolve = fakeSinkResolver({ "rebind.example.com": () => answer });
    const senders = [1, 2, 3].map(() =>
      createWebhookSender("wharf-test", { policy: RECEIVERS_ONLY, resolve }),
    );
    const [first, second, third] = senders as [
      ReturnType<typeof createWebhookSender>,
      ReturnType<typeof createWebhookSender>,
      ReturnType<typeof createWebhookSender>,
    ];
    const sink = `http://rebind.example.com:${port}/hook`;
    try {
      const ok = await first.send(sink, { "ce-id": "1" }, "{}", 2000);
      assert.deepEqual(
        ok,
        { ok: true, status: 200, error: "" },
        "the resolver's address is the one connected to",
      );
      assert.equal(receiver.received[0]?.headers.host, `rebind.example.com:${port}`, "for the sink's name");
      // A sender's pooled connection stays with the address checked when it opened; a new one
      // (another process, or after the pool dropped it) resolves again.
      answer = ["127.0.0.2"];
      const refused = await second.send(sink, { "ce-id": "2" }, "{}", 2000);
      assert.equal(refused.ok, false, "refused");
      assert.equal(refused.status, 0, "without a status");
      assert.match(
        refused.error,
        /^SinkAddressRefused: sink host rebind\.example\.com resolves to 127\.0\.0\.2, a loopback address/,
      );
      answer = ["127.0.0.1", "::ffff:127.0.0.2"];
      const mixed = await third.send(sink, { "ce-id": "3" }, "{}", 2000);
      assert.match(
        mixed.error,
        /resolves to ::ffff:127\.0\.0\.2, a loopback address/,
        "every address counts",
      );
      assert.equal(receiver.received.length, 1, "only the first delivery arrived");
      assert.deepEqual(
        resolve.calls,
        Array(3).fill("rebind.example.com"),
        "each connection resolved the name",
      );
    } finally {
      for (const sender of senders) sender.close();
      await receiver.close();
    }
  });

  it("a name that does not resolve fails the attempt with the resolver's error", async () => {
    const sender = createWebhookSender("wharf-test", {
      policy: LOOPBACK_ALLOWED,
      resolve: fakeSinkResolver({}),
    });
    try {
      const failed = await sender.send("https://gone.example.com/hook", {}, "{}", 2000);
      assert.equal(failed.ok, false);
      assert.match(failed.error, /ENOTFOUND/);
    } finally {
      sender.close();
    }
  });

  it("refuses address sinks in refused ranges without connecting (IPv4, IPv6, mapped)", async () => {
    const receiver = await startWebhookReceiver();
    const port = new URL(receiver.url()).port;
    const sender = createWebhookSender("wharf-test", {
      policy: RECEIVERS_ONLY,
      resolve: fakeSinkResolver({}),
    });
    try {
      for (const [sink, expected] of [
        [`http://127.0.0.2:${port}/hook`, /127\.0\.0\.2 is a loopback address/],
        [`http://[::1]:${port}/hook`, /::1 is a loopback address/],
        [`http://[::ffff:127.0.0.2]:${port}/hook`, /::ffff:7f00:2 is a loopback address/],
        [`http://0.0.0.0:${port}/hook`, /0\.0\.0\.0 is an unspecified address/],
      ] as const) {
        const refused = await sender.send(sink, {}, "{}", 2000);
        assert.match(refused.error, /^SinkAddressRefused: /, sink);
        assert.match(refused.error, expected, sink);
      }
      assert.equal(receiver.received.length, 0, "nothing was sent (0.0.0.0 reaches the receiver on Linux)");
      const ok = await sender.send(receiver.url(), {}, "{}", 2000);
      assert.equal(ok.ok, true, "the allowed address is reached");
    } finally {
      sender.close();
      await receiver.close();
    }
  });
});
