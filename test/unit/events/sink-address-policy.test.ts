import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, loadConfig } from "../../../src/config/config.js";
import {
  createSinkAddressPolicy,
  NO_SINK_EXCEPTIONS,
  parseCidr,
} from "../../../src/events/sink-address-policy.js";

const strict = createSinkAddressPolicy(NO_SINK_EXCEPTIONS);

/** Every refused range: an address inside it, at its edges, and the phrase the refusal uses. */
const REFUSED: [address: string, what: RegExp][] = [
  ["169.254.169.254", /cloud metadata/],
  ["169.254.170.2", /cloud metadata/],
  ["fd00:ec2::254", /cloud metadata/],
  ["100.100.100.200", /cloud metadata/],
  ["0.0.0.0", /unspecified/],
  ["0.255.255.255", /unspecified/],
  ["::", /unspecified/],
  ["127.0.0.1", /loopback/],
  ["127.255.255.254", /loopback/],
  ["::1", /loopback/],
  ["169.254.0.0", /link-local/],
  ["169.254.255.255", /link-local/],
  ["fe80::1", /link-local/],
  ["febf:ffff::1", /link-local/],
  ["224.0.0.1", /multicast/],
  ["239.255.255.250", /multicast/],
  ["ff02::1", /multicast/],
  ["255.255.255.255", /broadcast/],
  ["240.0.0.1", /reserved/],
  // IPv4-mapped IPv6 forms reach the IPv4 address itself.
  ["::ffff:169.254.169.254", /cloud metadata/],
  ["::ffff:a9fe:a9fe", /cloud metadata/],
  ["::ffff:127.0.0.1", /loopback/],
  ["::ffff:169.254.1.1", /link-local/],
  ["::ffff:0.0.0.0", /unspecified/],
  // NAT64 (RFC 6052): a gateway forwards 64:ff9b::<IPv4> to the IPv4 address.
  ["64:ff9b::169.254.169.254", /cloud metadata/],
  ["64:ff9b::7f00:1", /loopback/],
];

/** Private, carrier-grade and public addresses, next to the refused ranges: all allowed. */
const ALLOWED = [
  "10.1.2.3",
  "172.16.0.1",
  "172.31.255.255",
  "192.168.1.1",
  "fc00::1",
  "fd12:3456::1",
  "fd00:ec2::253",
  "100.64.0.1",
  "100.100.100.201",
  "169.253.255.255",
  "169.255.0.0",
  "1.0.0.0",
  "128.0.0.1",
  "223.255.255.255",
  "203.0.113.10",
  "2001:db8::1",
  "fec0::1",
  "fe7f:ffff::1",
  "::ffff:10.1.2.3",
  "64:ff9b::8.8.8.8",
];

describe("sink address policy", () => {
  it("refuses every internal range, in IPv4, IPv6, IPv4-mapped and NAT64 form, saying which it is", () => {
    for (const [address, what] of REFUSED) {
      const refusal = strict.refusalOf(address);
      assert.ok(refusal !== undefined, `${address} is refused`);
      assert.match(refusal, what, `${address}: ${refusal}`);
    }
  });

  it("allows private ranges (on-premises receivers) and public addresses", () => {
    for (const address of ALLOWED)
      assert.equal(strict.refusalOf(address), undefined, `${address} is allowed`);
  });

  it("refuses what is not an IP address (a name must be resolved first)", () => {
    for (const text of ["localhost", "", "[::1]", "10.1.2.3/32", "%eth0"]) {
      assert.equal(strict.refusalOf(text), "not an IP address", JSON.stringify(text));
    }
    assert.match(strict.refusalOf("fe80::1%eth0") ?? "", /link-local/, "a zone id does not hide the address");
  });

  it("--events-allow-loopback opens loopback addresses only", () => {
    const loopback = createSinkAddressPolicy({ allow: [], allowLoopback: true });
    for (const address of ["127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1"]) {
      assert.equal(loopback.refusalOf(address), undefined, `${address} is allowed`);
    }
    for (const address of ["169.254.169.254", "0.0.0.0", "::", "fe80::1", "224.0.0.1"]) {
      assert.ok(loopback.refusalOf(address), `${address} stays refused`);
    }
    assert.equal(strict.exceptionFor("127.0.0.1"), "--events-allow-loopback", "loopback names its setting");
    assert.equal(strict.exceptionFor("::ffff:127.0.0.1"), "--events-allow-loopback", "mapped loopback too");
    assert.equal(
      strict.exceptionFor("169.254.1.1"),
      "--events-sink-allow",
      "other ranges name the allow list",
    );
  });

  it("--events-sink-allow opens exactly the ranges listed, mapped forms included", () => {
    const policy = createSinkAddressPolicy({
      allow: ["169.254.169.254/32", "fe80::/16", "224.0.0.0/24"],
      allowLoopback: false,
    });
    assert.equal(policy.refusalOf("169.254.169.254"), undefined, "the listed address");
    assert.equal(policy.refusalOf("::ffff:169.254.169.254"), undefined, "its IPv4-mapped form");
    assert.match(policy.refusalOf("169.254.169.253") ?? "", /link-local/, "its neighbour stays refused");
    assert.equal(policy.refusalOf("fe80::1"), undefined, "inside the IPv6 range");
    assert.match(policy.refusalOf("fe81::1") ?? "", /link-local/, "outside it");
    assert.equal(policy.refusalOf("224.0.0.9"), undefined, "inside the multicast range listed");
    assert.match(policy.refusalOf("224.0.1.9") ?? "", /multicast/, "outside it");
    assert.match(policy.refusalOf("127.0.0.1") ?? "", /loopback/, "loopback stays refused");
    const wide = createSinkAddressPolicy({ allow: ["169.254.0.0/16"], allowLoopback: false });
    assert.equal(wide.refusalOf("169.254.169.254"), undefined, "a range opens the metadata address it holds");
    assert.throws(() => createSinkAddressPolicy({ allow: ["nope"], allowLoopback: false }), /not a CIDR/);
  });
});

describe("parseCidr", () => {
  it("reads IPv4 and IPv6 ranges and bare addresses", () => {
    assert.deepEqual(parseCidr("10.0.0.0/8"), { address: "10.0.0.0", prefix: 8, family: "ipv4" });
    assert.deepEqual(parseCidr(" fd00::/8 "), { address: "fd00::", prefix: 8, family: "ipv6" });
    assert.deepEqual(parseCidr("192.0.2.7"), { address: "192.0.2.7", prefix: 32, family: "ipv4" });
    assert.deepEqual(parseCidr("::1"), { address: "::1", prefix: 128, family: "ipv6" });
    assert.deepEqual(parseCidr("0.0.0.0/0"), { address: "0.0.0.0", prefix: 0, family: "ipv4" });
  });

  it("refuses anything else", () => {
    for (const bad of [
      "",
      "/8",
      "10.0.0.0/",
      "10.0.0.0/33",
      "fd00::/129",
      "10.0.0.0/8/8",
      "10.0.0.0/-1",
      "10.0.0.0/1e1",
      "10.0.0.0/ 8",
      "10.0.0/8",
      "010.0.0.0/8",
      "example.com/8",
      "fe80::1%eth0/64",
      "[::1]/128",
    ]) {
      assert.equal(parseCidr(bad), undefined, JSON.stringify(bad));
    }
  });
});

describe("sink address configuration", () => {
  it("reads --events-sink-allow and --events-allow-loopback from flags and the environment", () => {
    const fromFlags = loadConfig(
      { eventsSinkAllow: "10.0.0.0/8, 169.254.169.254,fd00::/8,", eventsAllowLoopback: "true" },
      {},
    );
    assert.deepEqual(
      fromFlags.events.sinkAllow,
      ["10.0.0.0/8", "169.254.169.254/32", "fd00::/8"],
      "normalised",
    );
    assert.equal(fromFlags.events.allowLoopback, true);
    const fromEnv = loadConfig(
      {},
      { WHARF_EVENTS_SINK_ALLOW: "192.0.2.0/24", WHARF_EVENTS_ALLOW_LOOPBACK: "1" },
    );
    assert.deepEqual(fromEnv.events.sinkAllow, ["192.0.2.0/24"]);
    assert.equal(fromEnv.events.allowLoopback, true);
    const defaults = loadConfig({}, {});
    assert.deepEqual(defaults.events.sinkAllow, [], "no exception by default");
    assert.equal(defaults.events.allowLoopback, false, "loopback refused by default");
  });

  it("refuses a bad CIDR or flag with a ConfigError naming it", () => {
    for (const bad of ["10.0.0.0/33", "10.0.0.0/8,nope", "localhost"]) {
      assert.throws(
        () => loadConfig({ eventsSinkAllow: bad }, {}),
        (err: Error) => err instanceof ConfigError && /--events-sink-allow .*CIDR/.test(err.message),
        bad,
      );
    }
    assert.throws(
      () => loadConfig({}, { WHARF_EVENTS_SINK_ALLOW: "fe80::1%eth0" }),
      /"fe80::1%eth0" is not one/,
      "the entry is named",
    );
    assert.throws(() => loadConfig({ eventsAllowLoopback: "yes" }, {}), ConfigError, "not a boolean");
  });
});
