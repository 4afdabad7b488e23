import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DomainError } from "../../../src/core/errors.js";
import { createSinkAddressPolicy, NO_SINK_EXCEPTIONS } from "../../../src/events/sink-address-policy.js";
import { validateSink, validateSinkAddresses } from "../../../src/events/sink-url.js";
import { fakeSinkResolver } from "../../support/sink-dns.js";

const strict = createSinkAddressPolicy(NO_SINK_EXCEPTIONS);
const dns = fakeSinkResolver({
  "hooks.example.com": ["203.0.113.10", "2001:db8::10"],
  "onprem.example.com": ["10.1.2.3"],
  localhost: ["127.0.0.1", "::1"],
  "split.example.com": ["203.0.113.10", "169.254.169.254"],
  "empty.example.com": [],
});

/** The INVALID_ARGUMENT description on `sink` that checking `sink` (http allowed) ends with. */
async function refusal(sink: string, policy = strict): Promise<string> {
  try {
    await validateSinkAddresses(validateSink(sink, true), policy, dns);
  } catch (err) {
    assert.ok(err instanceof DomainError, String(err));
    assert.equal(err.code, 3, "INVALID_ARGUMENT");
    const [violation] = err.details.fieldViolations ?? [];
    assert.equal(violation?.field, "sink", "a violation on sink");
    return violation?.description ?? "";
  }
  assert.fail(`${sink} was accepted`);
}

describe("validateSinkAddresses (when a subscription is created)", () => {
  it("refuses address hosts in refused ranges, however the URL spells them", async () => {
    const cases: [string, RegExp][] = [
      [
        "https://169.254.169.254/latest",
        /^sink host 169\.254\.169\.254 is a cloud metadata address.*--events-sink-allow/,
      ],
      // WHATWG URL parsing turns these spellings into 169.254.169.254 before anything looks at them.
      ["http://2852039166/", /169\.254\.169\.254 is a cloud metadata/],
      ["http://0xa9fea9fe/", /169\.254\.169\.254 is a cloud metadata/],
      ["http://0251.0376.0251.0376/", /169\.254\.169\.254 is a cloud metadata/],
      ["http://169.254.43518/", /169\.254\.169\.254 is a cloud metadata/],
      ["http://169.254.169.254./", /169\.254\.169\.254 is a cloud metadata/],
      ["https://[::ffff:169.254.169.254]/", /::ffff:a9fe:a9fe is a cloud metadata/],
      ["https://[fd00:ec2::254]/", /cloud metadata/],
      ["http://127.0.0.1:9000/h", /127\.0\.0\.1 is a loopback address.*--events-allow-loopback/],
      ["http://127.1/", /127\.0\.0\.1 is a loopback/],
      ["http://[::1]:9000/h", /::1 is a loopback/],
      ["http://0/", /0\.0\.0\.0 is an unspecified address/],
      ["https://[::]/", /:: is an unspecified address/],
      ["https://[fe80::1]/", /fe80::1 is a link-local address/],
      ["https://169.254.1.1/", /link-local/],
      ["https://224.0.0.1/", /multicast/],
      ["https://[ff02::1]/", /multicast/],
      ["https://255.255.255.255/", /broadcast/],
    ];
    for (const [sink, expected] of cases) assert.match(await refusal(sink), expected, sink);
  });

  it("resolves names: every address must be allowed, and a name that does not resolve is refused", async () => {
    assert.match(
      await refusal("http://localhost:9000/h"),
      /^sink host localhost resolves to 127\.0\.0\.1, a loopback address.*--events-allow-loopback/,
    );
    assert.match(
      await refusal("https://split.example.com/"),
      /split\.example\.com resolves to 169\.254\.169\.254, a cloud metadata address/,
      "one refused address among allowed ones is enough",
    );
    assert.match(
      await refusal("https://nowhere.example.com/"),
      /^sink host nowhere\.example\.com does not resolve \(ENOTFOUND\)/,
    );
    assert.match(await refusal("https://empty.example.com/"), /empty\.example\.com does not resolve/);
  });

  it("accepts public and private addresses and names resolving to them", async () => {
    for (const sink of [
      "https://hooks.example.com/x",
      "https://onprem.example.com/x",
      "https://10.1.2.3/",
      "https://172.16.0.1/",
      "https://192.168.1.1/",
      "https://[fd12::1]/",
      "https://203.0.113.10/",
    ]) {
      await validateSinkAddresses(sink, strict, dns);
    }
  });

  it("the operator's exceptions open refused addresses", async () => {
    const open = createSinkAddressPolicy({ allow: ["169.254.169.254/32"], allowLoopback: true });
    await validateSinkAddresses("http://localhost:9000/h", open, dns);
    await validateSinkAddresses("http://[::1]:9000/h", open, dns);
    await validateSinkAddresses("https://split.example.com/", open, dns);
    assert.match(await refusal("https://169.254.1.1/", open), /link-local/, "only what is listed");
  });
});
