// `wharf upstreams …` against a real server (SQLite: the API it calls runs on both engines in
// upstreams-api.test.ts). The password goes in on standard input only, through the shipped bin.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { rm } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { cliChecks, cliHome } from "../support/cli-checks.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { fakeSinkResolver } from "../support/sink-dns.js";
import { WHARF } from "../support/wharf-process.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const PASSWORD = "cli-SENTINEL-pw-31b7";

interface CliUpstream {
  uid: string;
  name: string;
  url: string;
  username?: string;
  hasPassword?: boolean;
  tagTtl: string;
}

/** Runs the shipped `wharf` with `input` on its standard input. */
function withStdin(args: string[], env: NodeJS.ProcessEnv, input: string) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      [WHARF, ...args],
      { env, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
    child.stdin?.end(input);
  });
}

describe("wharf upstreams", () => {
  let wharf: TestServer;
  let home: string;
  let env: NodeJS.ProcessEnv;
  const { ok, json, fails } = cliChecks(runCliInProcess, () => env, { failurePrintsNothing: true });

  before(async () => {
    wharf = await startTestServer({
      resolveSinkHost: fakeSinkResolver({
        "registry.example": ["203.0.113.10"],
        "mirror.example": ["203.0.113.11"],
      }),
    });
    ({ home, env } = await cliHome("wharf-cli-upstreams-", wharf, wharf.adminToken));
    await ok(["iam", "orgs", "create", "acme"]);
  });
  after(async () => {
    await wharf?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("creates an upstream with the password from stdin, and never prints it", async () => {
    const created = await withStdin(
      [
        "upstreams",
        "create",
        "acme",
        "hub",
        "--url",
        "https://registry.example",
        "--username",
        "robot",
        "--password-stdin",
        "-o",
        "json",
      ],
      env,
      `${PASSWORD}\n`,
    );
    assert.equal(created.code, 0, created.stderr);
    assert.ok(!created.stdout.includes(PASSWORD));
    const upstream = JSON.parse(created.stdout) as CliUpstream;
    assert.equal(upstream.name, "hub");
    assert.equal(upstream.username, "robot");
    assert.equal(upstream.hasPassword, true);
    assert.equal(upstream.tagTtl, "10m");
    // The newline ending the piped input is not part of the password.
    const row = await wharf.store.upstreams.get(upstream.uid);
    const { secretBoxOf } = await import("../../src/core/secret-box.js");
    assert.equal(await secretBoxOf(wharf.store.settings).open(row?.passwordSealed ?? ""), PASSWORD);
  });

  it("lists, gets by ORG/NAME and by uid, as a table and as JSON", async () => {
    await ok([
      "upstreams",
      "create",
      "acme",
      "quay",
      "--url",
      "https://mirror.example/quay",
      "--tag-ttl",
      "1h",
    ]);
    const table = await ok(["upstreams", "list", "--org", "acme", "-o", "table"]);
    assert.match(table, /NAME\W+URL\W+USERNAME\W+PASSWORD\W+TAG TTL/);
    assert.match(table, /hub\W+https:\/\/registry\.example\W+robot\W+set\W+10m\W/);
    assert.match(table, /quay\W+https:\/\/mirror\.example\/quay\W+1h\W/);
    const byName = await json<CliUpstream>(["upstreams", "get", "acme/quay"]);
    assert.equal(byName.tagTtl, "1h");
    assert.deepEqual(await json<CliUpstream>(["upstreams", "get", byName.uid]), byName);
  });

  it("updates the URL, TTL and password (from stdin), and clears the password", async () => {
    const updated = await json<CliUpstream>([
      "upstreams",
      "update",
      "acme/hub",
      "--url",
      "https://mirror.example",
      "--tag-ttl",
      "30s",
    ]);
    assert.equal(updated.url, "https://mirror.example");
    assert.equal(updated.tagTtl, "30s");
    assert.equal(updated.hasPassword, true);
    const replaced = await withStdin(
      ["upstreams", "update", "acme/hub", "--password-stdin", "-o", "json"],
      env,
      "new-secret",
    );
    assert.equal(replaced.code, 0, replaced.stderr);
    const cleared = await json<CliUpstream>(["upstreams", "update", "acme/hub", "--clear-password"]);
    assert.equal(cleared.hasPassword, undefined);
    assert.equal(cleared.username, "robot");
    const anonymous = await json<CliUpstream>([
      "upstreams",
      "update",
      "acme/hub",
      "--username",
      "",
      "--clear-password",
    ]);
    assert.equal(anonymous.username, undefined);
  });

  it("explains wrong usage and the server's refusals without a stack trace", async () => {
    await fails(["upstreams", "update", "acme/hub"], 2, /give --url, --username/);
    await fails(["upstreams", "get", "acme"], 2, /neither an upstream uid nor ORG\/NAME/);
    await fails(["upstreams", "get", "acme/nope"], 4, /upstream "acme\/nope" not found/);
    await fails(
      ["upstreams", "create", "acme", "bad", "--url", "http://registry.example"],
      1,
      /--events-allow-http/,
    );
    await fails(
      ["upstreams", "create", "acme", "meta", "--url", "https://169.254.169.254"],
      1,
      /cloud metadata address/,
    );
    const empty = await withStdin(
      [
        "upstreams",
        "create",
        "acme",
        "x",
        "--url",
        "https://registry.example",
        "--username",
        "u",
        "--password-stdin",
      ],
      env,
      "",
    );
    assert.equal(empty.code, 2, empty.stderr);
    assert.match(empty.stderr, /standard input was empty/);
  });

  it("deletes by ORG/NAME", async () => {
    await ok(["upstreams", "delete", "acme/quay"]);
    await fails(["upstreams", "get", "acme/quay"], 4, /not found/);
  });
});
