import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, loadConfig } from "../../../src/config/config.js";
import { identityNameFor } from "../../../src/login/register-person.js";
import { SESSION_GRANTS_CLAIM, sessionGrantUids } from "../../../src/login/session-grants.js";

const ORG = "a".repeat(40);

describe("login pieces", () => {
  it("derives a valid identity name from the provider's claims", () => {
    const base = { issuer: "https://idp.example", subject: "s", email: "" };
    assert.equal(identityNameFor({ ...base, displayName: "Ada Lovelace" }), "ada lovelace");
    assert.equal(identityNameFor({ ...base, displayName: "", email: "Grace.H@example.com" }), "grace.h");
    assert.equal(identityNameFor({ ...base, displayName: "名前" }), "user", "nothing usable → user");
    assert.match(identityNameFor({ ...base, displayName: "x".repeat(100) }), /^x{63}$/, "at most 63");
  });

  it("reads session grants only from a well-formed claim, bounded and deduplicated", () => {
    const m1 = `${ORG}/0123456789abcdef/0000000000000001`;
    const m2 = `${ORG}/0123456789abcdef/0000000000000002`;
    assert.deepEqual(sessionGrantUids({ [SESSION_GRANTS_CLAIM]: [m2, m1, m2, "not-a-uid", 7] }), [m1, m2]);
    assert.deepEqual(sessionGrantUids({ [SESSION_GRANTS_CLAIM]: m1 }), [], "a string is not a list");
    assert.deepEqual(sessionGrantUids({}), [], "absent → none");
    const many = Array.from({ length: 150 }, (_, i) => `${ORG}/${i.toString(16).padStart(16, "0")}`);
    assert.equal(sessionGrantUids({ [SESSION_GRANTS_CLAIM]: many }).length, 100, "capped at 100");
  });

  it("configures the default login provider from flags or environment, validated", () => {
    assert.equal(loadConfig({}, {}).defaultLogin, undefined, "none by default");
    const fromEnv = loadConfig(
      {},
      {
        WHARF_LOGIN_ISSUER: "https://accounts.example.com/",
        WHARF_LOGIN_CLIENT_ID: "wharf",
        WHARF_LOGIN_CLIENT_SECRET: "s3cret",
      },
    ).defaultLogin;
    assert.deepEqual(fromEnv, {
      issuer: "https://accounts.example.com",
      clientId: "wharf",
      clientSecret: "s3cret",
      additionalScopes: [],
    });
    assert.equal(
      loadConfig({ loginIssuer: "http://127.0.0.1:9000", loginClientId: "c" }, {}).defaultLogin?.clientSecret,
      "",
      "a public client on loopback http",
    );
    assert.throws(
      () => loadConfig({ loginIssuer: "http://idp.example", loginClientId: "c" }, {}),
      ConfigError,
    );
    assert.throws(() => loadConfig({ loginIssuer: "https://idp.example" }, {}), ConfigError);
    assert.throws(() => loadConfig({ loginClientSecret: "x" }, {}), ConfigError);
  });
});
