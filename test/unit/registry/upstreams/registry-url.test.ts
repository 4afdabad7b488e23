import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isDomainError } from "../../../../src/core/errors.js";
import { createSinkAddressPolicy, NO_SINK_EXCEPTIONS } from "../../../../src/events/sink-address-policy.js";
import {
  validateRegistryUrl,
  validateRegistryUrlAddresses,
} from "../../../../src/registry/upstreams/registry-url.js";
import { fakeSinkResolver } from "../../../support/sink-dns.js";

/** The INVALID_ARGUMENT description `fn` throws on `field`. */
async function refusal(fn: () => unknown, field = "url"): Promise<string> {
  try {
    await fn();
  } catch (err) {
    assert.ok(isDomainError(err), String(err));
    const violation = err.details.fieldViolations?.[0];
    assert.equal(violation?.field, field);
    return violation?.description ?? "";
  }
  assert.fail("no error");
}

describe("validateRegistryUrl", () => {
  it("normalises scheme, host, default port and trailing slashes; keeps a path prefix", () => {
    assert.equal(validateRegistryUrl("https://Registry.Example", false), "https://registry.example");
    assert.equal(validateRegistryUrl("https://registry.example:443/", false), "https://registry.example");
    assert.equal(
      validateRegistryUrl("https://registry.example:5000//team/sub//", false),
      "https://registry.example:5000/team/sub",
    );
    assert.equal(validateRegistryUrl("https://[::1]:8443", false), "https://[::1]:8443");
    assert.equal(validateRegistryUrl("http://127.0.0.1:5000", true), "http://127.0.0.1:5000");
  });

  it("refuses what is not an https registry URL, naming the field", async () => {
    assert.match(await refusal(() => validateRegistryUrl("", false)), /url is required/);
    assert.match(await refusal(() => validateRegistryUrl("not a url", false)), /absolute https URL/);
    assert.match(await refusal(() => validateRegistryUrl("ftp://r.example", false)), /scheme "ftp"/);
    assert.match(
      await refusal(() => validateRegistryUrl("http://127.0.0.1:5000", false)),
      /--events-allow-http/,
      "plain http even on loopback needs the flag",
    );
    const creds = await refusal(() => validateRegistryUrl("https://user:hunter2@r.example", false));
    assert.match(creds, /must not carry credentials/);
    assert.ok(!creds.includes("hunter2"), "the refused URL's password is not repeated");
    assert.match(await refusal(() => validateRegistryUrl("https://r.example?x=1", false)), /query/);
    assert.match(await refusal(() => validateRegistryUrl("https://r.example/?", false)), /query/);
    assert.match(await refusal(() => validateRegistryUrl("https://r.example/#", false)), /fragment/);
    assert.match(
      await refusal(() => validateRegistryUrl("https://r.example/UPPER", false)),
      /repository path prefix/,
    );
    assert.match(
      await refusal(() => validateRegistryUrl(`https://r.example/${"a".repeat(2100)}`, false)),
      /at most 2048/,
    );
    assert.match(
      await refusal(() => validateRegistryUrl("", false, "remote.url"), "remote.url"),
      /remote\.url is required/,
    );
  });
});

describe("validateRegistryUrlAddresses", () => {
  const strict = createSinkAddressPolicy(NO_SINK_EXCEPTIONS);
  const resolve = fakeSinkResolver({
    "ok.example": ["203.0.113.1", "2001:db8::1"],
    "meta.example": ["203.0.113.1", "169.254.169.254"],
    "loop.example": ["127.0.0.1"],
    "private.example": ["10.1.2.3"],
    "empty.example": [],
  });

  it("accepts public and private addresses; refuses metadata, link-local and (without the flag) loopback, naming the flag", async () => {
    await validateRegistryUrlAddresses("https://ok.example", strict, resolve);
    await validateRegistryUrlAddresses("https://private.example", strict, resolve);
    assert.match(
      await refusal(() => validateRegistryUrlAddresses("https://meta.example", strict, resolve)),
      /url host meta\.example resolves to 169\.254\.169\.254, a cloud metadata address, which Wharf may not reach \(the server's --events-sink-allow can allow it\)/,
    );
    assert.match(
      await refusal(() => validateRegistryUrlAddresses("https://169.254.1.1", strict, resolve)),
      /is a link-local address/,
    );
    assert.match(
      await refusal(() => validateRegistryUrlAddresses("https://loop.example", strict, resolve)),
      /a loopback address.*--events-allow-loopback/,
    );
    assert.match(
      await refusal(() => validateRegistryUrlAddresses("https://[::1]", strict, resolve)),
      /--events-allow-loopback/,
    );
    const loopbackAllowed = createSinkAddressPolicy({ allow: [], allowLoopback: true });
    await validateRegistryUrlAddresses("https://loop.example", loopbackAllowed, resolve);
    const metaAllowed = createSinkAddressPolicy({ allow: ["169.254.169.254/32"], allowLoopback: false });
    await validateRegistryUrlAddresses("https://meta.example", metaAllowed, resolve);
  });

  it("refuses a host that does not resolve, or resolves to nothing", async () => {
    assert.match(
      await refusal(() => validateRegistryUrlAddresses("https://nowhere.example", strict, resolve)),
      /url host nowhere\.example does not resolve \(ENOTFOUND\)/,
    );
    assert.match(
      await refusal(() => validateRegistryUrlAddresses("https://empty.example", strict, resolve)),
      /does not resolve;/,
    );
  });
});
