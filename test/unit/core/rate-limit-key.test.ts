import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { rateLimitKey } from "../../../src/core/rate-limit-key.js";

describe("rateLimitKey", () => {
  it("keys a verified caller by identity, wherever it calls from", () => {
    const uid = "0123456789abcdef0123456789abcdef01234567";
    assert.equal(rateLimitKey(uid, "10.0.0.1"), `id:${uid}`);
    assert.equal(rateLimitKey(uid, "10.0.0.2"), rateLimitKey(uid, undefined));
  });

  it("keys an anonymous caller by address; IPv4-mapped IPv6 as IPv4", () => {
    assert.equal(rateLimitKey(undefined, "10.0.0.1"), "ip:10.0.0.1");
    assert.equal(rateLimitKey(undefined, "::ffff:10.0.0.1"), "ip:10.0.0.1");
    assert.equal(rateLimitKey(undefined, "::FFFF:127.0.0.1"), "ip:127.0.0.1");
    assert.notEqual(rateLimitKey(undefined, "10.0.0.1"), rateLimitKey(undefined, "10.0.0.2"));
    assert.equal(rateLimitKey(undefined, undefined), "ip:");
  });

  it("keys an IPv6 caller by its /64, however the address is written", () => {
    const net = "ip:2001:db8:0:1::/64";
    assert.equal(rateLimitKey(undefined, "2001:db8:0:1::1"), net);
    assert.equal(rateLimitKey(undefined, "2001:0db8:0000:0001:ffff:ffff:ffff:ffff"), net);
    assert.equal(rateLimitKey(undefined, "2001:db8::1:0:0:0:2"), net);
    assert.equal(rateLimitKey(undefined, "2001:DB8:0:1:1:2:3:4"), net);
    assert.equal(rateLimitKey(undefined, "2001:db8:0:1::1.2.3.4"), net);
    assert.notEqual(rateLimitKey(undefined, "2001:db8:0:2::1"), net);
    assert.equal(rateLimitKey(undefined, "::1"), "ip:0:0:0:0::/64");
    assert.equal(rateLimitKey(undefined, "fe80::1%eth0"), "ip:fe80:0:0:0::/64");
  });
});
