import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { newChildUid, newRootUid } from "../../../src/core/uidp.js";
import { newRedeliveryUid, parseDeliveryUid, streamDeliveryUid } from "../../../src/storage/delivery-uid.js";

describe("delivery uids", () => {
  const sub = newChildUid(newRootUid());

  it("name a stream delivery by its event seq and a redelivery by random bytes with the top bit set", () => {
    assert.equal(streamDeliveryUid(sub, 255), `${sub}/00000000000000ff`, "seq as 16 hex");
    assert.deepEqual(parseDeliveryUid(streamDeliveryUid(sub, 2 ** 53 - 1)), {
      kind: "stream",
      subscriptionUid: sub,
      seq: 2 ** 53 - 1,
    });
    for (let i = 0; i < 50; i++) {
      const uid = newRedeliveryUid(sub);
      assert.match(uid, new RegExp(`^${sub}/[89a-f][0-9a-f]{15}$`), "top bit set");
      assert.deepEqual(parseDeliveryUid(uid), { kind: "redelivery", subscriptionUid: sub });
    }
  });

  it("refuses what is not <subscription uid>/<16 hex>", () => {
    const org = newRootUid();
    for (const bad of [
      "",
      sub,
      `${org}/0000000000000001`,
      `${sub}/000000000000001`,
      `${sub}/00000000000000011`,
      `${sub}/000000000000000G`,
      `${sub}/0000000000000000`,
      `${sub}/7fffffffffffffff`,
      `${sub.toUpperCase()}/0000000000000001`,
    ]) {
      assert.equal(parseDeliveryUid(bad), undefined, `"${bad}"`);
    }
  });
});
