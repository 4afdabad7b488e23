// `wharf policies` against a real server (SQLite: the API it calls is covered on both engines by
// pull-policies.test.ts).
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { cliChecks, cliHome } from "../support/cli-checks.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { registeredPerson } from "../support/registered-person.js";
import { buildImage, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

describe("wharf policies", () => {
  let wharf: TestServer;
  let home: string;
  let env: NodeJS.ProcessEnv;
  let digest: string;
  let robot: string;
  const { ok, json, fails, wharfCli } = cliChecks(runCliInProcess, () => env, { failurePrintsNothing: true });

  before(async () => {
    wharf = await startTestServer();
    ({ home, env } = await cliHome("wharf-cli-policies-", wharf, wharf.adminToken));
    await ok(["iam", "orgs", "create", "acme"]);
    const token = await wharf.registryToken();
    digest = (await pushImage(wharf, "acme/app", "1.0", token, buildImage("cli-policies"))).digest;
    robot = (await registeredPerson(wharf, "scanner")).uid;
  });
  after(async () => {
    await wharf?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("creates, lists, updates, evaluates and deletes a policy", async () => {
    const created = await json<{
      uid: string;
      mode: string;
      requireSbom: boolean;
      exemptIdentities: string[];
    }>([
      "policies",
      "create",
      "acme",
      "--name",
      "baseline",
      "--mode",
      "ENFORCE",
      "--require-sbom",
      "--deny-severity",
      "high",
      "--only-fixable",
      "--exempt",
      robot,
    ]);
    assert.equal(created.mode, "ENFORCE");
    assert.equal(created.requireSbom, true);
    assert.deepEqual(created.exemptIdentities, [robot]);

    const table = await wharfCli(["policies", "list", "--under", "acme", "-o", "table"]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /baseline\W+ENFORCE\W+denySeverity=HIGH \(fixable\), requireSbom\W+1/);

    const evaluated = await wharfCli(["policies", "evaluate", "acme/app:1.0", "-o", "table"]);
    assert.equal(evaluated.code, 0, evaluated.stderr);
    assert.match(evaluated.stdout, new RegExp(`^denied: acme/app@${digest}`));
    assert.match(evaluated.stdout, /baseline\W+ENFORCE\W+requireSbom\W+no SBOM attached/);
    const byDigest = await json<{ allowed: boolean; violations: { rule: string }[] }>([
      "policies",
      "evaluate",
      `acme/app@${digest}`,
    ]);
    assert.equal(byDigest.allowed, false);
    assert.deepEqual(
      byDigest.violations.map((v) => v.rule),
      ["requireSbom"],
    );

    const updated = await json<{ mode: string; requireSbom?: boolean; denyEol?: boolean }>([
      "policies",
      "update",
      "acme/baseline",
      "--mode",
      "WARN",
      "--no-require-sbom",
      "--deny-eol",
    ]);
    assert.equal(updated.mode, "WARN");
    assert.equal(updated.requireSbom ?? false, false);
    assert.equal(updated.denyEol, true);
    const allowed = await json<{ allowed: boolean }>(["policies", "evaluate", "acme/app:1.0"]);
    assert.equal(allowed.allowed, true);

    await fails(
      ["policies", "create", "acme", "--name", "x", "--mode", "SOMETIMES", "--deny-eol"],
      2,
      /--mode is ENFORCE or WARN/,
    );
    await fails(
      ["policies", "create", "acme", "--name", "norules", "--mode", "WARN"],
      1,
      /at least one rule/,
    );

    const deleted = await wharfCli(["policies", "delete", created.uid]);
    assert.equal(deleted.code, 0, deleted.stderr);
    await fails(["policies", "get", "acme/baseline"], 4, /not found/);
  });
});
