// `wharf vulns vex upload` and the VEX marks of `wharf vulns report` against a real server, in this
// process (runCli). One engine (SQLite), as for the other client commands: the API they call is
// covered on both engines by test/e2e/vex.test.ts.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { cliChecks, cliHome } from "../support/cli-checks.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { type BuiltImage, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const GRYPE = fileURLToPath(new URL("../fixtures/vulnreports/grype.json", import.meta.url));
const VEX = fileURLToPath(new URL("../fixtures/vex/openvex-not-affected.json", import.meta.url));

interface ReportJson {
  vulnerabilityCount?: string;
  suppressedCount?: string;
  vulnerabilityMatches?: {
    vulnerability: { id: string };
    suppressed?: boolean;
    vex?: { status?: string; justification?: string };
  }[];
}

describe("wharf vulns vex", () => {
  let wharf: TestServer;
  let home: string;
  let env: NodeJS.ProcessEnv;
  let image: BuiltImage;
  let vexFile: string;
  const { ok, json, fails } = cliChecks(runCliInProcess, () => env, { failurePrintsNothing: true });

  before(async () => {
    wharf = await startTestServer();
    ({ home, env } = await cliHome("wharf-cli-vex-", wharf, wharf.adminToken));
    await ok(["iam", "orgs", "create", "acme"]);
    image = await pushImage(wharf, "acme/app", "latest", await wharf.registryToken(), "vex-cli");
    await ok(["import", "vulnreport", "--repo", "acme/app", "--digest", image.digest, GRYPE]);
    vexFile = join(home, "app.openvex.json");
    await writeFile(
      vexFile,
      readFileSync(VEX, "utf8").replaceAll("a".repeat(64), image.digest.slice("sha256:".length)),
    );
  });
  after(async () => {
    await wharf?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("vex upload stores the document and says how many statements apply; report marks suppressed rows", async () => {
    const table = await ok(["vulns", "vex", "upload", "acme/app:latest", vexFile, "-o", "table"]);
    // One resource prints as a vertical table.
    assert.match(table, new RegExp(`│ DIGEST\\s+│ ${image.digest}`));
    assert.match(table, /│ STATEMENTS │ 4\s/);
    assert.match(table, /│ APPLIED\s+│ 3\s/);
    assert.match(table, /│ DOCUMENT\s+│ https:\/\/openvex.dev\/docs\/example\/vex-9fb3463de1b57/);

    const report = await ok(["vulns", "report", "acme/app:latest", "-o", "table"]);
    assert.match(report, /2 matches suppressed by VEX \(not counted above\)/);
    assert.match(report, /│ critical\s+│ 0\s+│ 0\s+│/, "the suppressed CRITICAL leaves the summary");
    assert.match(
      report,
      /CVE-2026-10003\s+│ critical\s+│ logkit .*│ suppressed \(vulnerable_code_not_in_execute_path\)/,
    );
    assert.match(report, /CGA-2x3f-7c9q-m4hw\s+│ high .*│ suppressed \(fixed\)/);
    assert.match(report, /GHSA-abcd-1234-wxyz .*│ under_investigation/);

    const full = await json<ReportJson>(["vulns", "report", `acme/app@${image.digest}`]);
    assert.equal(full.vulnerabilityCount, "2");
    assert.equal(full.suppressedCount, "2");
    assert.deepEqual(
      full.vulnerabilityMatches
        ?.filter((m) => m.suppressed)
        .map((m) => m.vulnerability.id)
        .sort(),
      ["CGA-2x3f-7c9q-m4hw", "CVE-2026-10003"],
    );
  });

  it("refuses a bad document with the server's reason, and a missing file as a usage error", async () => {
    const bad = join(home, "bad.json");
    await writeFile(bad, JSON.stringify({ "@context": "https://openvex.dev/ns/v0.2.0" }));
    await fails(["vulns", "vex", "upload", "acme/app:latest", bad], 1, /@id must be a non-empty string/);
    await fails(
      ["vulns", "vex", "upload", "acme/app:latest", join(home, "missing.json")],
      2,
      /cannot read .*ENOENT/,
    );
  });
});
