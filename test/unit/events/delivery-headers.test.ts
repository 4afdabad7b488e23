import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { decodeJwt } from "jose";
import { createDeliverySigner, type DeliverySigner } from "../../../src/auth/delivery-signer.js";
import { createIssuer } from "../../../src/auth/issuer.js";
import { createDeliveryHeaders } from "../../../src/events/delivery-headers.js";
import { bodyDigest, WEBHOOK_AUDIENCE } from "../../../src/events/webhook-request.js";
import type { StoredEvent } from "../../../src/storage/event-store.js";
import { openStore } from "../../../src/storage/sql/open-store.js";

const T0 = Date.parse("2026-03-01T10:00:00.000Z");
const GROUP_A = "a".repeat(40);
const GROUP_B = "b".repeat(40);

function eventNumber(seq: number): StoredEvent {
  return {
    seq,
    id: `event-${seq}`,
    type: "dev.wharf.api.registry.tag.created.v1",
    source: "http://127.0.0.1:8080/registry/v2/tags",
    subject: `${GROUP_A}/repo/v${seq}`,
    groupUid: GROUP_A,
    time: T0,
    extensions: { bodytype: "platform.registry.v2.Tag" },
    data: `{"actor":{"subject":"x"},"body":{"name":"v${seq}"}}`,
  };
}

describe("createDeliveryHeaders", async () => {
  const store = await openStore({ sqlitePath: ":memory:" });
  after(() => store.close());
  let now = T0;
  const clock = { now: () => now };
  const issuer = createIssuer({ store, issuerUrl: "http://127.0.0.1:8080", clock });
  const realSign = createDeliverySigner({ issuer, audience: WEBHOOK_AUDIENCE, ttlSeconds: 300, clock });
  const signed: string[] = [];
  let failNext = false;
  const sign: DeliverySigner = async (subject, digest) => {
    signed.push(subject);
    if (failNext) {
      failNext = false;
      throw new Error("key store unavailable");
    }
    return realSign(subject, digest);
  };

  it("signs once per event and group, and each token carries its group and the body's digest", async () => {
    signed.length = 0;
    const headersOf = createDeliveryHeaders({ sign, clock });
    const first = eventNumber(1);
    const [a1, a2, b1] = await Promise.all([
      headersOf(GROUP_A, first),
      headersOf(GROUP_A, first),
      headersOf(GROUP_B, first),
    ]);
    assert.deepEqual(signed, [`webhook:${GROUP_A}`, `webhook:${GROUP_B}`], "one signature per group");
    assert.equal(a1?.authorization, a2?.authorization, "lanes of one group share the token");
    assert.notEqual(a1?.authorization, b1?.authorization, "another group gets its own");
    const claims = decodeJwt(String(b1?.authorization).slice("Bearer ".length));
    assert.equal(claims.sub, `webhook:${GROUP_B}`, "token subject is the subscription's group");
    assert.deepEqual(claims.webhook, { digest: bodyDigest(first.data) }, "digest of this body");
    assert.equal(a1?.["ce-id"], "event-1", "CloudEvent headers");
    assert.equal(a1?.["ce-bodytype"], "platform.registry.v2.Tag", "extensions as ce- headers");

    await headersOf(GROUP_A, eventNumber(2));
    assert.equal(signed.length, 3, "another event is signed again");
  });

  it("signs again once the reuse window has passed, and does not keep a failed signing", async () => {
    signed.length = 0;
    now = T0;
    const headersOf = createDeliveryHeaders({ sign, clock, reuseMs: 1000 });
    const event = eventNumber(7);
    const before = await headersOf(GROUP_A, event);
    now += 1001;
    const later = await headersOf(GROUP_A, event);
    assert.equal(signed.length, 2, "signed again after the window");
    assert.notEqual(before.authorization, later.authorization, "a fresh token");

    failNext = true;
    await assert.rejects(headersOf(GROUP_B, event), /key store unavailable/, "the failure surfaces");
    const retried = await headersOf(GROUP_B, event);
    assert.match(String(retried.authorization), /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/, "the retry signs");
    assert.equal(signed.length, 4, "the failed signing was not cached");
  });

  it("keeps at most maxEvents events", async () => {
    signed.length = 0;
    now = T0;
    const headersOf = createDeliveryHeaders({ sign, clock, maxEvents: 2 });
    for (const seq of [1, 2, 3]) await headersOf(GROUP_A, eventNumber(seq));
    await headersOf(GROUP_A, eventNumber(3));
    assert.equal(signed.length, 3, "the newest is still kept");
    await headersOf(GROUP_A, eventNumber(1));
    assert.equal(signed.length, 4, "the oldest was dropped");
  });
});
