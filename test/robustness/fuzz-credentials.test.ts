import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { startTestServer, type TestServer } from "../support/wharf-server.js";
import {
  anyText,
  assertApiAnswer,
  assertNoServerFaultLogged,
  assertOciAnswer,
  describeExchange,
  fuzzParameters,
  percentEncodeText,
  type RawRequest,
  rawRequest,
  StatusTally,
} from "./robustness-support.js";

// Properties of the two endpoints that turn credentials into tokens: the registry's `/token`
// (Basic credentials, scopes, service, account; GET and the OAuth2 form POST) and the API's
// `/sts/exchange` (a bearer token plus query, form or JSON parameters). Whatever a client sends,
// the answer is never a 5xx, errors are structured, and a token is issued only for a credential
// that verifies (or, at `/token`, for no credential at all: an anonymous token).

/** Printable Latin-1 text, as a header value may carry. */
const headerValue = (maxLength: number) =>
  anyText(maxLength).map((text) => text.replace(/[^\x20-\x7e\xa0-\xff]/g, "?"));

const hex = (bytes: number) =>
  fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => Buffer.from(b).toString("hex"));

/** JWT-shaped junk: three base64url parts, a part missing, or a header that lies. */
const jwtLike = fc.oneof(
  fc
    .tuple(
      fc.base64String({ maxLength: 40 }),
      fc.base64String({ maxLength: 40 }),
      fc.base64String({ maxLength: 40 }),
    )
    .map((parts) => parts.map((p) => p.replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_")).join(".")),
  fc.constantFrom(
    "e30.e30.e30",
    "e30.e30.",
    "e30..",
    "..",
    "eyJhbGciOiJub25lIn0.e30.",
    "eyJhbGciOiJFUzI1NiIsImtpZCI6IngifQ.e30.AAAA",
    "a.b.c.d.e",
    "x".repeat(12_000),
  ),
);

/**
 * A `/token` credential; `registry` and `api` stand for a valid token of that audience (the real
 * tokens exist only once the server runs), any other secret is used as written.
 */
type Credential =
  | { kind: "none" }
  | { kind: "basic" | "form"; user: string; password: string }
  | { kind: "bearer"; token: string }
  | { kind: "raw"; header: string };

/** What `/token` must do with a credential sent properly; "unknown" for text that might parse. */
function verdictOf(c: Credential): "accepted" | "refused" | "unknown" {
  switch (c.kind) {
    case "none":
      return "accepted";
    case "basic":
    case "form":
      if (c.user === "" && c.password === "") return "accepted";
      return c.user === "_token" && c.password === "registry" ? "accepted" : "refused";
    case "bearer":
      return c.token === "registry" ? "accepted" : "refused";
    case "raw":
      if (c.header === "basic Og==") return "accepted";
      return /^(basic|bearer) /i.test(c.header) ? "unknown" : "refused";
  }
}

describe("fuzz: credentials at /token and /sts/exchange", () => {
  let wharf: TestServer;
  let registryToken: string;
  let org: string;

  before(async () => {
    wharf = await startTestServer();
    org = await wharf.create("/iam/v2/groups", { name: "acme" });
    registryToken = await wharf.registryToken();
  });
  after(() => wharf.close());

  it("/token: never a 5xx; a token only for a verified credential or none", async (t) => {
    const tally = new StatusTally();
    const secret = fc.oneof(fc.constantFrom("registry", "api"), jwtLike, headerValue(30));
    const user = fc.oneof(
      { weight: 4, arbitrary: fc.constant("_token") },
      { weight: 1, arbitrary: hex(20) },
      { weight: 1, arbitrary: headerValue(12).filter((u) => !u.includes(":")) },
    );
    const credential: fc.Arbitrary<Credential> = fc.oneof(
      fc.constant({ kind: "none" as const }),
      fc.record({ kind: fc.constant("basic" as const), user, password: secret }),
      fc.record({ kind: fc.constant("form" as const), user, password: secret }),
      fc.record({ kind: fc.constant("bearer" as const), token: secret }),
      fc.record({
        kind: fc.constant("raw" as const),
        header: fc.oneof(
          fc.constantFrom(
            "Basic !!!",
            "Basic",
            "Basic ",
            "Bearer",
            "Bearer ",
            "Digest abc",
            "basic Og==",
            "Negotiate x",
          ),
          headerValue(40).filter((h) => h.trim() !== ""),
        ),
      }),
    );
    const action = fc.constantFrom("pull", "push", "delete", "*", "pull,push", "", "admin", "pull,,push");
    const name = fc.oneof(
      fc.constantFrom(
        "acme/app",
        "acme/new",
        "public/app",
        "nobody/x",
        "",
        "ACME/app",
        "acme//x",
        "a".repeat(300),
      ),
      anyText(10),
    );
    const scope = fc.oneof(
      fc.tuple(name, action).map(([n, a]) => `repository:${n}:${a}`),
      fc.constantFrom(
        "registry:catalog:*",
        "repository:acme/app",
        "repository",
        ":",
        "::",
        "repository::pull",
      ),
      anyText(30),
    );
    const request = fc.record({
      credential,
      method: fc.constantFrom("GET", "GET", "GET", "GET", "POST", "POST", "PUT", "DELETE"),
      scopes: fc.array(scope, { maxLength: 4 }),
      service: fc.option(fc.oneof(fc.constant(new URL(wharf.registryUrl).host), anyText(20)), {
        nil: undefined,
      }),
      account: fc.option(anyText(20), { nil: undefined }),
      grantType: fc.constantFrom("password", "password", "refresh_token", "client_credentials", ""),
      formType: fc.constantFrom(
        "application/x-www-form-urlencoded",
        "application/json",
        "text/plain",
        undefined,
      ),
    });
    await fc.assert(
      fc.asyncProperty(request, async (input) => {
        const reveal = (value: string) =>
          value === "registry" ? registryToken : value === "api" ? wharf.adminToken : value;
        const basic = (u: string, p: string) =>
          `Basic ${Buffer.from(`${u}:${p}`, "latin1").toString("base64")}`;
        const c = input.credential;
        const post = input.method === "POST";
        const headers: Record<string, string> = {};
        if (c.kind === "basic") headers.authorization = basic(c.user, reveal(c.password));
        if (c.kind === "bearer") headers.authorization = `Bearer ${reveal(c.token)}`;
        if (c.kind === "raw") headers.authorization = c.header;
        let body: string | undefined;
        if (post) {
          const fields = new URLSearchParams({ grant_type: input.grantType });
          if (c.kind === "form") {
            fields.set("username", c.user);
            fields.set("password", reveal(c.password));
          }
          for (const s of input.scopes) fields.append("scope", s);
          body = fields.toString();
          if (input.formType !== undefined) headers["content-type"] = input.formType;
        }
        const query = new URLSearchParams();
        for (const s of input.scopes) query.append("scope", s);
        if (input.service !== undefined) query.set("service", input.service);
        if (input.account !== undefined) query.set("account", input.account);
        const req: RawRequest = {
          method: input.method,
          path: `/token${post || query.size === 0 ? "" : `?${query}`}`,
          headers,
          ...(body === undefined ? {} : { body }),
        };
        const res = await rawRequest(wharf.registryUrl, req);
        tally.add(res.status);
        assertOciAnswer(req, res);
        const what = describeExchange(req, res);
        if (res.status === 200) {
          const answer = JSON.parse(res.body.toString("utf8")) as { token?: unknown; expires_in?: unknown };
          assert.ok(typeof answer.token === "string" && answer.token.split(".").length === 3, what);
          assert.ok(typeof answer.expires_in === "number" && answer.expires_in > 0, what);
        }
        const proper =
          input.method === "GET" ||
          (post && input.grantType === "password" && input.formType === "application/x-www-form-urlencoded");
        if (!proper) {
          assert.notEqual(res.status, 200, what);
          return;
        }
        // A GET carries the header's credential; the form POST only the form's.
        const verdict = post
          ? verdictOf(
              c.kind === "form" ? { kind: "basic", user: c.user, password: c.password } : { kind: "none" },
            )
          : verdictOf(c.kind === "form" ? { kind: "none" } : c);
        if (verdict === "accepted") assert.equal(res.status, 200, what);
        if (verdict === "refused") assert.ok(res.status === 401 || res.status === 403, what);
      }),
      fuzzParameters("/token credentials", 250),
    );
    t.diagnostic(`statuses: ${tally}`);
    tally.assertReached([
      [200, 300],
      [401, 404],
    ]);
  });

  it("/sts/exchange: never a 5xx; a token only for a verified Wharf token", async (t) => {
    const tally = new StatusTally();
    const bearer = fc.oneof(
      { weight: 3, arbitrary: fc.constant("api") },
      { weight: 1, arbitrary: fc.constant("registry") },
      { weight: 2, arbitrary: jwtLike },
      { weight: 1, arbitrary: fc.constantFrom("", "Bearer", "Basic Og==", "bearer  ", "Bearer a b") },
      { weight: 1, arbitrary: headerValue(30) },
    );
    const value = fc.oneof(
      fc.constantFrom(wharf.apiUrl, wharf.registryUrl, "https://evil.example", "", "default", "true", "1"),
      fc.constantFrom("registry.pull", "iam.groups.get", "nope", "*"),
      fc.constant(org),
      hex(20),
      anyText(20),
    );
    const key = fc.constantFrom(
      "aud",
      "identity",
      "identity_provider",
      "scopes",
      "scope",
      "cap",
      "create_refresh_token",
      "grant_type",
      "subject_token",
    );
    const jsonValue = fc.oneof(value, fc.array(value, { maxLength: 3 }), fc.jsonValue({ maxDepth: 2 }));
    const request = fc.record({
      bearer,
      method: fc.constantFrom("GET", "POST", "POST", "PUT"),
      query: fc.array(fc.tuple(key, value), { maxLength: 4 }),
      body: fc.oneof(
        fc.constant(undefined),
        fc.array(fc.tuple(key, value), { maxLength: 4 }).map((pairs) => ({
          type: "application/x-www-form-urlencoded",
          text: new URLSearchParams(pairs).toString(),
        })),
        fc
          .dictionary(key, jsonValue, { maxKeys: 4 })
          .map((o) => ({ type: "application/json", text: JSON.stringify(o) })),
        fc
          .tuple(fc.constantFrom("application/json", "text/plain", "", "multipart/form-data"), anyText(40))
          .map(([type, text]) => ({ type, text })),
      ),
    });
    await fc.assert(
      fc.asyncProperty(request, async (input) => {
        const headers: Record<string, string> = {};
        const token =
          input.bearer === "api"
            ? wharf.adminToken
            : input.bearer === "registry"
              ? registryToken
              : input.bearer;
        if (input.bearer === "api" || input.bearer === "registry") headers.authorization = `Bearer ${token}`;
        else if (token !== "") headers.authorization = token.startsWith("B") ? token : `Bearer ${token}`;
        if (input.body?.type) headers["content-type"] = input.body.type;
        const query = input.query.map(([k, v]) => `${k}=${percentEncodeText(v)}`).join("&");
        const req: RawRequest = {
          method: input.method,
          path: `/sts/exchange${query === "" ? "" : `?${query}`}`,
          headers,
          ...(input.body === undefined || input.method === "GET" ? {} : { body: input.body.text }),
        };
        const res = await rawRequest(wharf.apiUrl, req);
        tally.add(res.status);
        assertApiAnswer(req, res);
        const what = describeExchange(req, res);
        if (res.status === 200) {
          assert.equal(input.bearer, "api", `a token for a credential that is no Wharf API token: ${what}`);
          const answer = JSON.parse(res.body.toString("utf8")) as { token?: unknown; expiry?: unknown };
          assert.ok(typeof answer.token === "string" && typeof answer.expiry === "string", what);
        }
      }),
      fuzzParameters("/sts/exchange credentials", 250),
    );
    t.diagnostic(`statuses: ${tally}`);
    tally.assertReached([
      [200, 300],
      [400, 500],
    ]);
  });

  it("still serves normal requests afterwards, and logged no server fault", async () => {
    const res = await wharf.registry("/token?scope=repository:acme/app:pull", {
      headers: { authorization: `Basic ${Buffer.from(`_token:${registryToken}`).toString("base64")}` },
    });
    assert.equal(res.status, 200, await res.text());
    const exchange = await wharf.api("/sts/exchange", { token: wharf.adminToken });
    assert.equal(exchange.status, 200, await exchange.text());
    assertNoServerFaultLogged(wharf.logLines);
  });
});
