import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { EmptySchema } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import * as subs from "../../src/gen/platform/events/v2/subscriptions_pb.js";
import { grpcCall } from "../support/grpc-call.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const SERVICE = "/platform.events.v2.SubscriptionsService";

describe("SubscriptionsService over gRPC (grpc-js)", () => {
  let wharf: TestServer;
  let client: grpc.Client;
  let receiver: WebhookReceiver;

  before(async () => {
    wharf = await startTestServer({ config: { eventsAllowLoopback: "true" } }); // a loopback receiver
    receiver = await startWebhookReceiver();
    client = new grpc.Client(new URL(wharf.apiUrl).host, grpc.credentials.createInsecure());
  });
  after(async () => {
    client.close();
    await wharf.close();
    await receiver.close();
  });

  it("creates, gets, lists and deletes a subscription; the create is delivered; bad sinks are INVALID_ARGUMENT", async () => {
    const org = await wharf.create("/iam/v2/groups", { name: "acme" });
    const created = await grpcCall(
      client,
      `${SERVICE}/CreateSubscription`,
      { input: subs.CreateSubscriptionRequestSchema, output: subs.SubscriptionSchema },
      create(subs.CreateSubscriptionRequestSchema, { parent: org, subscription: { sink: receiver.url() } }),
      wharf.adminToken,
    );
    assert.equal(created.error, undefined, `create: ${created.error?.details}`);
    const uid = created.response?.uid ?? "";
    assert.ok(uid.startsWith(`${org}/`), "uid is <group>/<16 hex>");
    const delivered = await receiver.waitFor((a) => a.length === 1);
    assert.equal(delivered[0]?.headers["ce-subject"], uid, "the create event is delivered to the new sink");

    const got = await grpcCall(
      client,
      `${SERVICE}/GetSubscription`,
      { input: subs.GetSubscriptionRequestSchema, output: subs.SubscriptionSchema },
      create(subs.GetSubscriptionRequestSchema, { uid }),
      wharf.adminToken,
    );
    assert.equal(got.response?.sink, receiver.url(), "get returns the sink");
    const listed = await grpcCall(
      client,
      `${SERVICE}/ListSubscriptions`,
      { input: subs.ListSubscriptionsRequestSchema, output: subs.ListSubscriptionsResponseSchema },
      create(subs.ListSubscriptionsRequestSchema, { uidp: { descendantsOf: org } }),
      wharf.adminToken,
    );
    assert.deepEqual(
      listed.response?.subscriptions.map((s) => s.uid),
      [uid],
      "listed",
    );
    const bad = await grpcCall(
      client,
      `${SERVICE}/CreateSubscription`,
      { input: subs.CreateSubscriptionRequestSchema, output: subs.SubscriptionSchema },
      create(subs.CreateSubscriptionRequestSchema, { parent: org, subscription: { sink: "ftp://x" } }),
      wharf.adminToken,
    );
    assert.equal(bad.error?.code, grpc.status.INVALID_ARGUMENT, "bad sink");
    const unauthenticated = await grpcCall(
      client,
      `${SERVICE}/GetSubscription`,
      { input: subs.GetSubscriptionRequestSchema, output: subs.SubscriptionSchema },
      create(subs.GetSubscriptionRequestSchema, { uid }),
    );
    assert.equal(unauthenticated.error?.code, grpc.status.UNAUTHENTICATED, "a token is required");
    const deleted = await grpcCall(
      client,
      `${SERVICE}/DeleteSubscription`,
      { input: subs.DeleteSubscriptionRequestSchema, output: EmptySchema },
      create(subs.DeleteSubscriptionRequestSchema, { uid }),
      wharf.adminToken,
    );
    assert.equal(deleted.error, undefined, "deleted");
    const gone = await grpcCall(
      client,
      `${SERVICE}/GetSubscription`,
      { input: subs.GetSubscriptionRequestSchema, output: subs.SubscriptionSchema },
      create(subs.GetSubscriptionRequestSchema, { uid }),
      wharf.adminToken,
    );
    assert.equal(gone.error?.code, grpc.status.NOT_FOUND, "gone");
  });
});
