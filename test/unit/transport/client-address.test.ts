import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  clientAddressFrom,
  clientAddressOf,
  forwardedOriginOf,
  NO_TRUSTED_PROXIES,
  trustedProxies,
} from "../../../src/transport/client-address.js";

const trust = trustedProxies(["10.0.0.0/8", "192.168.1.1", "fd00::/8"]);

describe("trustedProxies", () => {
  it("normalises ranges and matches addresses, IPv4-mapped IPv6 as IPv4", () => {
    assert.deepEqual(trust.ranges, ["10.0.0.0/8", "192.168.1.1/32", "fd00::/8"]);
    assert.deepEqual(trustedProxies(["10.1.2.3/8"]).ranges, ["10.0.0.0/8"]);
    assert.equal(trust.trusts("10.200.0.1"), true);
    assert.equal(trust.trusts("::ffff:10.200.0.1"), true);
    assert.equal(trust.trusts("192.168.1.1"), true);
    assert.equal(trust.trusts("192.168.1.2"), false);
    assert.equal(trust.trusts("fd12::1"), true);
    assert.equal(trust.trusts("fe80::1"), false);
    assert.equal(trust.trusts("not an address"), false);
    assert.equal(trust.trusts(undefined), false);
    assert.equal(NO_TRUSTED_PROXIES.trusts("127.0.0.1"), false);
  });

  it("names the entry that is no CIDR", () => {
    assert.throws(() => trustedProxies(["10.0.0.0/8", "10.0.0.0/33"]), /"10\.0\.0\.0\/33" is no CIDR/);
    assert.throws(() => trustedProxies(["example.com"]), /"example\.com" is no CIDR/);
  });
});

describe("clientAddressOf", () => {
  const xff = (value: string | string[]) => ({ "x-forwarded-for": value });

  it("is the peer when the peer is not trusted, whatever the headers say", () => {
    const req = { socket: { remoteAddress: "203.0.113.9" }, headers: xff("198.51.100.1") };
    assert.equal(clientAddressOf(req, trust), "203.0.113.9");
    assert.equal(
      clientAddressOf({ ...req, socket: { remoteAddress: "10.0.0.1" } }, NO_TRUSTED_PROXIES),
      "10.0.0.1",
    );
  });

  it("walks X-Forwarded-For from the right past trusted hops to the first untrusted one", () => {
    const peer = "10.0.0.1";
    assert.equal(
      clientAddressFrom({ peer, headers: xff("198.51.100.1, 203.0.113.7, 10.9.9.9") }, trust),
      "203.0.113.7",
    );
    // Repeated headers count as one list, in order.
    assert.equal(
      clientAddressFrom({ peer, headers: xff(["198.51.100.1", "10.9.9.9"]) }, trust),
      "198.51.100.1",
    );
    // All trusted: the left-most.
    assert.equal(clientAddressFrom({ peer, headers: xff("10.1.1.1, 10.2.2.2") }, trust), "10.1.1.1");
    // None: the peer.
    assert.equal(clientAddressFrom({ peer, headers: {} }, trust), peer);
    // A malformed hop ends the walk at the hop that vouched for it.
    assert.equal(
      clientAddressFrom({ peer, headers: xff("198.51.100.1, junk, 10.9.9.9") }, trust),
      "10.9.9.9",
    );
    assert.equal(
      clientAddressFrom({ peer: `::ffff:${peer}`, headers: xff("2001:db8::1") }, trust),
      "2001:db8::1",
    );
  });
});

describe("forwardedOriginOf", () => {
  const facts = (peer: string, headers: Record<string, string>) => ({ peer, headers, secure: false });

  it("builds the origin from a trusted peer's X-Forwarded-Proto and -Host (left-most values)", () => {
    const headers = {
      "x-forwarded-proto": "https, http",
      "x-forwarded-host": "Registry.Example.com, inner",
      host: "10.0.0.5:5000",
    };
    assert.equal(forwardedOriginOf(facts("10.0.0.1", headers), trust), "https://registry.example.com");
    assert.equal(
      forwardedOriginOf(facts("10.0.0.1", { "x-forwarded-proto": "https", host: "wharf:5000" }), trust),
      "https://wharf:5000",
    );
  });

  it("is undefined from an untrusted peer, without the headers, or with a bad proto or host", () => {
    const headers = { "x-forwarded-proto": "https", "x-forwarded-host": "registry.example.com" };
    assert.equal(forwardedOriginOf(facts("203.0.113.9", headers), trust), undefined);
    assert.equal(forwardedOriginOf(facts("10.0.0.1", { host: "x" }), trust), undefined);
    assert.equal(
      forwardedOriginOf(facts("10.0.0.1", { "x-forwarded-proto": "gopher", host: "x" }), trust),
      undefined,
    );
    assert.equal(
      forwardedOriginOf(facts("10.0.0.1", { "x-forwarded-host": "evil.com/path?x=" }), trust),
      undefined,
    );
  });
});
