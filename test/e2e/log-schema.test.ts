import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import { buildImage, fetchRegistryClient, pushImage } from "../support/registry-push.js";
import { adminTokenOf, serveProcess, stopProcess, type WharfProcess } from "../support/wharf-process.js";

// The one log schema (ADR 0041): every line a real `wharf serve` prints on stdout, driven through
// API and registry requests (errors included) and a graceful stop, and no credential anywhere in
// what it printed.

const LEVELS = new Set(["trace", "debug", "info", "warn", "error", "fatal"]);
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const CLIENT_SECRET = "client-secret-9f8e7d6c5b4a";
const WRONG_PASSWORD = "wrong-password-1a2b3c4d5e";

/** Checks one request line against the schema; returns why it fails, or undefined. */
function requestLineProblem(line: Record<string, unknown>): string | undefined {
  if (typeof line.requestId !== "string" || line.requestId === "") return "requestId";
  if (typeof line.traceId !== "string" || !/^[0-9a-f]{32}$/.test(line.traceId)) return "traceId";
  if (line.service !== "api" && line.service !== "registry") return "service";
  if ((typeof line.route === "string") === (typeof line.rpc === "string"))
    return "exactly one of route and rpc";
  if (typeof line.status !== "number") return "status";
  if (typeof line.durationMs !== "number" || line.durationMs < 0) return "durationMs";
  if (!("identityUid" in line) || (line.identityUid !== null && typeof line.identityUid !== "string"))
    return "identityUid";
  if (typeof line.clientAddress !== "string" || !/127\.0\.0\.1$/.test(line.clientAddress))
    return "clientAddress";
  return undefined;
}

describe("log schema", () => {
  let dataDir: string;
  let server: WharfProcess;
  let apiToken: string;
  let registryToken: string;
  let lines: Record<string, unknown>[] = [];

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "wharf-log-schema-"));
    server = await serveProcess(dataDir, { WHARF_LOG_LEVEL: "debug" });
    apiToken = await adminTokenOf(dataDir, server.apiUrl);
    registryToken = await adminTokenOf(dataDir, server.apiUrl, { audience: server.registryUrl });
    const api = (path: string, init: { method?: string; token?: string; body?: unknown } = {}) =>
      fetch(`${server.apiUrl}${path}`, {
        method: init.method ?? "GET",
        headers: {
          "content-type": "application/json",
          ...(init.token === undefined ? {} : { authorization: `Bearer ${init.token}` }),
        },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      });
    // API: a success, a not-found, a bad body, a bad token, no token, an unknown path, an IdP with a client secret.
    const group = await api("/iam/v2/groups", { method: "POST", token: apiToken, body: { name: "acme" } });
    assert.equal(group.status, 200);
    const org = ((await group.json()) as { uid: string }).uid;
    const missing = org.replace(/.$/, (c) => (c === "0" ? "1" : "0"));
    assert.equal((await api(`/iam/v2/groups/${missing}`, { token: apiToken })).status, 404);
    assert.equal((await api("/iam/v2/groups/not-a-uid", { token: apiToken })).status, 400);
    assert.equal(
      (await api("/iam/v2/groups", { method: "POST", token: apiToken, body: { name: 7 } })).status,
      400,
    );
    assert.equal((await api(`/iam/v2/groups/${org}`, { token: `${apiToken}x` })).status, 401);
    assert.equal((await api(`/iam/v2/groups/${org}`)).status, 401);
    assert.equal((await api("/no/such/path", { method: "POST", token: apiToken, body: {} })).status, 404);
    const idp = await api(`/iam/v2/identityProviders/${org}`, {
      method: "POST",
      token: apiToken,
      body: {
        name: "corporate",
        defaultRole: builtInRoleUid("viewer"),
        oidc: { issuer: "https://login.acme.example", clientId: "wharf", clientSecret: CLIENT_SECRET },
      },
    });
    assert.equal(idp.status, 200, await idp.clone().text());
    // Registry: a push, a pull, errors, the token endpoint with a password (right and wrong).
    const registry = fetchRegistryClient(server.registryUrl);
    const image = await pushImage(registry, "acme/app", "v1", registryToken, buildImage("logged"));
    assert.equal(
      (await registry.registry("/v2/acme/app/manifests/v1", { token: registryToken })).status,
      200,
    );
    assert.equal(
      (await registry.registry(`/v2/acme/app/blobs/sha256:${"0".repeat(64)}`, { token: registryToken }))
        .status,
      404,
    );
    assert.equal(
      (await registry.registry("/v2/acme/app/manifests/v1", { method: "PATCH", token: registryToken }))
        .status,
      405,
    );
    assert.equal((await registry.registry("/v2/acme/app/manifests/v1")).status, 401);
    assert.equal((await registry.registry("/nowhere")).status, 404);
    const form = (password: string) =>
      fetch(`${server.registryUrl}/token?service=wharf`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "password",
          username: "_token",
          password,
          scope: "repository:acme/app:pull",
        }).toString(),
      });
    assert.equal((await form(registryToken)).status, 200);
    assert.equal((await form(WRONG_PASSWORD)).status, 401);
    const basic = await fetch(`${server.registryUrl}/token?service=wharf&scope=repository:acme/app:pull`, {
      headers: { authorization: `Basic ${Buffer.from(`_token:${registryToken}`).toString("base64")}` },
    });
    assert.equal(basic.status, 200);
    assert.ok(image.digest);
    await stopProcess(server);
    // The pipe may still hold the last lines when the process has exited.
    for (const deadline = Date.now() + 5000; !server.stdout().includes('"msg":"stopped"'); ) {
      assert.ok(Date.now() < deadline, "the last line, stopped, arrived");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    lines = server
      .stdout()
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => {
        try {
          return JSON.parse(line) as Record<string, unknown>;
        } catch {
          return assert.fail(`a stdout line that is not JSON: ${line}`);
        }
      });
  });
  after(async () => {
    if (server) await stopProcess(server);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("every line has time, level and msg", () => {
    assert.ok(lines.length > 20, `${lines.length} lines`);
    for (const line of lines) {
      assert.match(String(line.time), ISO_TIME, JSON.stringify(line));
      assert.ok(LEVELS.has(String(line.level)), JSON.stringify(line));
      assert.equal(typeof line.msg, "string", JSON.stringify(line));
      assert.notEqual(line.msg, "", JSON.stringify(line));
    }
    for (const msg of ["shutdown started", "listeners closing", "listeners closed", "stopped"])
      assert.ok(
        lines.some((l) => l.msg === msg),
        `the shutdown's "${msg}" line`,
      );
  });

  it("every request line, API and registry alike, has the request fields", () => {
    const requests = lines.filter((l) => l.msg === "request");
    for (const line of requests) assert.equal(requestLineProblem(line), undefined, JSON.stringify(line));
    const api = requests.filter((l) => l.service === "api");
    const registry = requests.filter((l) => l.service === "registry");
    assert.ok(
      api.length >= 7 && registry.length >= 8,
      `${api.length} API and ${registry.length} registry lines`,
    );
    const statuses = (of: Record<string, unknown>[]) => new Set(of.map((l) => l.status));
    for (const status of [200, 400, 401, 404]) assert.ok(statuses(api).has(status), `an API ${status}`);
    for (const status of [200, 201, 401, 404, 405])
      assert.ok(statuses(registry).has(status), `a registry ${status}`);
    assert.ok(
      api.some(
        (l) => l.rpc === "platform.iam.v2.GroupsService/CreateGroup" && l.identityUid === ADMIN_IDENTITY_UID,
      ),
    );
    assert.ok(api.some((l) => l.route === "unrouted" && l.status === 404));
    assert.ok(
      api.some((l) => l.status === 401 && l.identityUid === null),
      "a refused caller is anonymous",
    );
    assert.ok(
      registry.some(
        (l) => l.route === "manifest" && l.status === 201 && l.identityUid === ADMIN_IDENTITY_UID,
      ),
    );
    assert.ok(registry.some((l) => l.route === "unmatched" && l.status === 404));
    assert.ok(
      registry.some((l) => l.route === "token" && l.status === 200 && l.identityUid === ADMIN_IDENTITY_UID),
    );
    assert.ok(
      new Set(requests.map((l) => l.traceId)).size === requests.length,
      "each request its own new trace",
    );
  });

  it("no token, password or client secret appears in anything it printed", () => {
    const everything = server.output();
    for (const [what, secret] of [
      ["the API token", apiToken],
      ["the registry token", registryToken],
      ["the token's signature", registryToken.split(".")[2] as string],
      ["a wrong password", WRONG_PASSWORD],
      ["the client secret", CLIENT_SECRET],
      ["a Basic credential", Buffer.from(`_token:${registryToken}`).toString("base64")],
    ] as const)
      assert.equal(everything.includes(secret), false, `${what} is not in the output`);
    assert.doesNotMatch(everything, /Bearer [A-Za-z0-9]/);
  });
});
