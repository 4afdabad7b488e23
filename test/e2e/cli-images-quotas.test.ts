// `wharf images usage` and `wharf images quota set` against a real server (SQLite: the API they
// call is covered on both engines by registry-quotas.test.ts).
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { cliChecks, cliHome } from "../support/cli-checks.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { personWithRole } from "../support/registered-person.js";
import { buildImage, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

describe("wharf images usage / quota set", () => {
  let wharf: TestServer;
  let home: string;
  let env: NodeJS.ProcessEnv;
  const { ok, json, fails } = cliChecks(runCliInProcess, () => env, { failurePrintsNothing: true });

  before(async () => {
    wharf = await startTestServer();
    ({ home, env } = await cliHome("wharf-cli-quotas-", wharf, wharf.adminToken));
    await ok(["iam", "orgs", "create", "acme"]);
    const token = await wharf.registryToken();
    await pushImage(wharf, "acme/one", "v1", token, buildImage("one", ["shared"]));
    await pushImage(wharf, "acme/two", "v1", token, buildImage("two", ["shared"]));
  });
  after(async () => {
    await wharf?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("shows usage as a table and as JSON", async () => {
    const usage = await json<{ storageBytes: string; repoCount: string; tagCount: string }>([
      "images",
      "usage",
      "acme",
    ]);
    assert.equal(usage.repoCount, "2");
    assert.equal(usage.tagCount, "2");
    assert.ok(Number(usage.storageBytes) > 0);
    const table = await ok(["images", "usage", "acme", "-o", "table"]);
    assert.match(table, new RegExp(`STORAGE\\W+${usage.storageBytes} B\\W`));
    assert.match(table, /STORAGE QUOTA\W+unlimited\W/);
    assert.match(table, /REPOS\W+2\W/);
    assert.match(table, /REPO QUOTA\W+unlimited\W/);
    assert.match(table, /TAGS\W+2\W/);
  });

  it("sets a quota with units; a field left out keeps its value; unlimited clears it", async () => {
    assert.deepEqual(await json(["images", "quota", "set", "acme", "--storage", "10GiB", "--repos", "100"]), {
      storageBytes: String(10 * 2 ** 30),
      repoCount: "100",
    });
    assert.deepEqual(await json(["images", "quota", "set", "acme", "--repos", "5"]), {
      storageBytes: String(10 * 2 ** 30),
      repoCount: "5",
    });
    const table = await ok(["images", "usage", "acme", "-o", "table"]);
    assert.match(table, /STORAGE QUOTA\W+10\.0 GiB\W/);
    assert.match(table, /REPO QUOTA\W+5\W/);
    assert.deepEqual(
      await json(["images", "quota", "set", "acme", "--storage", "unlimited", "--repos", "0"]),
      {
        storageBytes: "0",
        repoCount: "0",
      },
    );
  });

  it("refuses bad usage, and an organization owner", async () => {
    await fails(["images", "quota", "set", "acme"], 2, /give --storage, --repos or both/);
    await fails(["images", "quota", "set", "acme", "--storage", "lots"], 2, /is not a size/);
    const acme = (await json<{ uid: string }>(["iam", "orgs", "describe", "acme"])).uid;
    const owner = await personWithRole(wharf, "owner", acme, "owner");
    await fails(["images", "quota", "set", "acme", "--storage", "1GiB"], 5, /permission/i, {
      WHARF_TOKEN: owner.token,
    });
  });
});
