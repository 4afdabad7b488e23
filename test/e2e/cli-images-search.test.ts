// `wharf images search` against a real server (SQLite: the API it calls is covered on both engines
// by search-api.test.ts).
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { cliChecks, cliHome } from "../support/cli-checks.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { buildImage, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

describe("wharf images search", () => {
  let wharf: TestServer;
  let home: string;
  let env: NodeJS.ProcessEnv;
  let digest: string;
  const { json, wharfCli } = cliChecks(runCliInProcess, () => env, { failurePrintsNothing: true });

  before(async () => {
    wharf = await startTestServer();
    ({ home, env } = await cliHome("wharf-cli-search-", wharf, wharf.adminToken));
    await wharf.create("/iam/v2/groups", { name: "acme" });
    const token = await wharf.registryToken();
    digest = (await pushImage(wharf, "acme/shop-api", "stable", token, buildImage("cli-search"))).digest;
  });
  after(async () => {
    await wharf?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("prints repos, tags and images as a table, and the whole answer as JSON", async () => {
    const r = await wharfCli(["images", "search", "shop", "-o", "table"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /KIND\W+REFERENCE\W+DETAIL/);
    assert.match(r.stdout, /repo\W+acme\/shop-api/);
    const byTag = await wharfCli(["images", "search", "STAB", "-o", "table"]);
    assert.match(byTag.stdout, new RegExp(`tag\\W+acme/shop-api:stable\\W+${digest}`));
    const byDigest = await wharfCli(["images", "search", digest.slice(0, 14), "-o", "table"]);
    assert.match(byDigest.stdout, new RegExp(`image\\W+acme/shop-api@${digest}\\W+stable`));
    const whole = await json<{ repos: { repoPath: string }[] }>(["images", "search", "shop-api"]);
    assert.deepEqual(
      whole.repos.map((m) => m.repoPath),
      ["acme/shop-api"],
    );
  });

  it("refuses a bad --limit as a usage error and shows the server's refusal of an empty text", async () => {
    const bad = await wharfCli(["images", "search", "shop", "--limit", "0"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--limit must be a positive whole number/);
    const empty = await wharfCli(["images", "search", " "]);
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /query/);
  });
});
