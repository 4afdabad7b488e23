import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { WharfApiError } from "../../../src/sdk/errors.js";
import { saveCredentials } from "../../../src/sdk/node/stored-credentials.js";
import { storedLogin, storedToken } from "../../../src/sdk/node/stored-login.js";
import { cachingTokenSource, EXPIRY_MARGIN_MS, staticToken } from "../../../src/sdk/token-sources.js";

const API = "https://wharf.example.com";
const noNetwork: typeof fetch = async () => assert.fail("no request expected");

describe("token sources", () => {
  it("staticToken always gives its token", async () => {
    const source = staticToken("abc");
    assert.equal(await source.token(), "abc");
    assert.equal(await source.token(), "abc");
  });

  it("cachingTokenSource reuses a token until it is within the margin of expiry", async () => {
    let now = Date.parse("2030-01-01T00:00:00Z");
    let issued = 0;
    const source = cachingTokenSource(
      async () => ({ token: `t${++issued}`, expiry: new Date(now + 10 * 60_000).toISOString() }),
      () => now,
    );
    assert.equal(await source.token(), "t1");
    now += 5 * 60_000;
    assert.equal(await source.token(), "t1", "still 5 minutes left");
    now += 5 * 60_000 - EXPIRY_MARGIN_MS + 1;
    assert.equal(await source.token(), "t2", "inside the margin: renewed");
  });

  it("cachingTokenSource shares one issue among concurrent callers and retries after a failure", async () => {
    let calls = 0;
    let fail = true;
    const source = cachingTokenSource(async () => {
      calls++;
      await new Promise((r) => setTimeout(r, 5));
      if (fail) throw new Error("STS down");
      return { token: "ok", expiry: "2999-01-01T00:00:00Z" };
    });
    const results = await Promise.allSettled([source.token(), source.token(), source.token()]);
    assert.deepEqual(
      results.map((r) => r.status),
      ["rejected", "rejected", "rejected"],
    );
    assert.equal(calls, 1);
    fail = false;
    assert.equal(await source.token(), "ok", "a failure is not kept");
    assert.equal(calls, 2);
  });
});

describe("storedLogin without a server", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "wharf-sdk-unit-"));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it("no stored login: UNAUTHENTICATED, saying how to log in", async () => {
    const env = { WHARF_CONFIG_DIR: join(dir, "empty") };
    await assert.rejects(
      storedLogin({ apiUrl: API, env, fetch: noNetwork }).token(),
      (err: unknown) =>
        err instanceof WharfApiError &&
        err.code === Code.Unauthenticated &&
        err.message === `not logged in to ${API}: run \`wharf auth login\``,
    );
  });

  it("a valid stored token is used as is, found by the API URL's origin", async () => {
    const env = { WHARF_CONFIG_DIR: join(dir, "valid") };
    await saveCredentials(
      API,
      { token: "stored", expiry: "2999-01-01T00:00:00Z", refreshToken: "wrt_x" },
      env,
    );
    assert.equal(await storedToken({ apiUrl: `${API}/some/path`, env, fetch: noNetwork }), "stored");
  });

  it("an expired token without a refresh token: UNAUTHENTICATED, no request made", async () => {
    const env = { WHARF_CONFIG_DIR: join(dir, "expired") };
    await saveCredentials(API, { token: "old", expiry: "2020-01-01T00:00:00Z" }, env);
    await assert.rejects(
      storedToken({ apiUrl: API, env, fetch: noNetwork }),
      (err: unknown) => err instanceof WharfApiError && /expired: run `wharf auth login`/.test(err.message),
    );
  });

  it("a refresh that gets no answer fails UNAVAILABLE and keeps the stored login", async () => {
    const env = { WHARF_CONFIG_DIR: join(dir, "down") };
    await saveCredentials(API, { token: "old", expiry: "2020-01-01T00:00:00Z", refreshToken: "wrt_y" }, env);
    const down: typeof fetch = async () => {
      throw new TypeError("fetch failed");
    };
    await assert.rejects(
      storedToken({ apiUrl: API, env, fetch: down }),
      (err: unknown) => err instanceof WharfApiError && err.code === Code.Unavailable,
    );
    const again = storedToken({ apiUrl: API, env, fetch: down });
    await assert.rejects(again, /refreshing the token/, "the refresh token was not thrown away");
  });
});
