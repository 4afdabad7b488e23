import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

describe("events smoke", () => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  before(async () => {
    server = await startTestServer();
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });
  it("a subscription create is delivered to itself", async () => {
    const org = await server.create("/iam/v2/groups", { name: "acme" });
    const sub = await server.create(`/events/v2/subscriptions/${org}`, { sink: receiver.url() });
    const got = await receiver.waitFor((a) => a.length >= 1);
    console.log(got[0]?.headers, got[0]?.body, sub);
    const res = await server.api(`/events/v2/subscriptions/${sub}`, { token: server.adminToken });
    console.log(await res.text());
    assert.equal(got[0]?.headers["ce-type"], "dev.wharf.api.events.subscription.created.v1");
  });
});
