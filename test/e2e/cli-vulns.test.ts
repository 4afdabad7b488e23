// The security verbs of the client CLI (`wharf vulns report`, the vulnerability columns of `images
// history` and `images diff`, `wharf advisories list|describe`) against a real server: reports
// uploaded with `wharf import vulnreport`, advisories imported with `wharf import advisories`. One
// engine (SQLite), as for the other client commands: the API they call is covered on both engines by
// its own suites. Most command lines run in this process through runCli (the parser bin/wharf.js
// runs); a few run the shipped bin/wharf.js (built dist/) end to end: an upload, an import into the
// server's store, a missing report (4) and a usage error (2).
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { cliChecks, cliHome } from "../support/cli-checks.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { registeredPerson } from "../support/registered-person.js";
import { type BuiltImage, pushImage } from "../support/registry-push.js";
import { runWharf } from "../support/wharf-process.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const REPORTS = fileURLToPath(new URL("../fixtures/vulnreports/", import.meta.url));
const ADVISORIES = fileURLToPath(new URL("../fixtures/advisories/", import.meta.url));

interface ReportJson {
  id: string;
  scanner: { name: string };
  vulnerabilityMatches?: {
    vulnerability: { id: string; severity?: string };
    pkg: { name: string; version: string };
    fix?: { versions?: string[]; state?: string };
  }[];
}

interface AdvisoryJson {
  uid: string;
  advisoryId: string;
  artifactName: string;
  aliases?: string[];
  events?: unknown[];
}

describe("the wharf security commands", () => {
  let wharf: TestServer;
  let home: string;
  let env: NodeJS.ProcessEnv;
  let v1: BuiltImage;
  let v2: BuiltImage;
  let v3: BuiltImage;

  const { wharfCli, ok, json, fails } = cliChecks(runCliInProcess, () => env, { failurePrintsNothing: true });
  /** The shipped bin/wharf.js, a child process. */
  const bin = cliChecks(runWharf, () => env, { failurePrintsNothing: true });

  const ids = (report: ReportJson) =>
    (report.vulnerabilityMatches ?? []).map((m) => m.vulnerability.id).sort();

  before(async () => {
    wharf = await startTestServer();
    ({ home, env } = await cliHome("wharf-cli-vulns-", wharf, wharf.adminToken));
    await ok(["iam", "orgs", "create", "acme"]);
    const token = await wharf.registryToken();
    v1 = await pushImage(wharf, "acme/app", "latest", token, "v1");
    await bin.ok([
      "import",
      "vulnreport",
      "--repo",
      "acme/app",
      "--digest",
      v1.digest,
      join(REPORTS, "grype.json"),
    ]);
    v2 = await pushImage(wharf, "acme/app", "latest", token, "v2");
    await ok([
      "import",
      "vulnreport",
      "--repo",
      "acme/app",
      "--digest",
      v2.digest,
      join(REPORTS, "trivy.json"),
    ]);
    v3 = await pushImage(wharf, "acme/app", "latest", token, "v3"); // no report
  });
  after(async () => {
    await wharf?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("vulns report: the summary and matches as a table, the report as JSON or YAML, filtered by flags", async () => {
    const table = await ok(["vulns", "report", `acme/app@${v1.digest}`, "-o", "table"]);
    assert.match(table, /report [0-9a-f/]+ \(GRYPE 0\.87\.0, stored /);
    assert.match(table, /SEVERITY.*MATCHES.*FIXABLE/);
    for (const [severity, matches, fixable] of [
      ["critical", 1, 0],
      ["high", 1, 1],
      ["medium", 1, 1],
      ["low", 1, 0],
      ["unknown", 0, 0],
    ])
      assert.match(table, new RegExp(`│ ${severity}\\s+│ ${matches}\\s+│ ${fixable}\\s+│`));
    assert.match(table, /4 of 4 matches shown/);
    assert.match(table, /ID.*SEVERITY.*PACKAGE.*INSTALLED.*FIXED IN.*STATE/);
    assert.match(
      table,
      /CGA-2x3f-7c9q-m4hw\s+│ high\s+│ libexampletls\s+│ 3\.1\.3-r0\s+│ 3\.1\.4-r1\s+│ fixed/,
    );
    assert.match(table, /CVE-2026-10003\s+│ critical\s+│ logkit\s+│ 1\.2\.0\s+│\s+│ not fixed/);
    assert.match(table, /CVE-2026-10004\s+│ low\s+│ busybox .*│ won't fix/);

    const full = await json<ReportJson>(["vulns", "report", `acme/app@${v1.digest}`]);
    assert.equal(full.scanner.name, "GRYPE");
    assert.deepEqual(ids(full), [
      "CGA-2x3f-7c9q-m4hw",
      "CVE-2026-10003",
      "CVE-2026-10004",
      "GHSA-abcd-1234-wxyz",
    ]);
    const high = await json<ReportJson>(["vulns", "report", `acme/app@${v1.digest}`, "--severity", "high"]);
    assert.deepEqual(ids(high), ["CGA-2x3f-7c9q-m4hw", "CVE-2026-10003"], "--severity is a minimum");
    const fixable = parseYaml(
      await ok(["vulns", "report", `acme/app@${v1.digest}`, "--fixable", "-o", "yaml"]),
    ) as ReportJson;
    assert.equal(fixable.id, full.id);
    assert.deepEqual(ids(fixable), ["CGA-2x3f-7c9q-m4hw", "GHSA-abcd-1234-wxyz"]);
    assert.equal(
      await ok(["vulns", "report", `acme/app@${v1.digest}`, "--fixable", "--severity", "HIGH", "-o", "id"]),
      "CGA-2x3f-7c9q-m4hw\n",
    );
    const filteredTable = await ok([
      "vulns",
      "report",
      `acme/app@${v1.digest}`,
      "--severity",
      "critical",
      "-o",
      "table",
    ]);
    assert.match(filteredTable, /1 of 4 matches shown/);
    assert.match(filteredTable, /│ high\s+│ 1\s+│ 1\s+│/, "the summary counts the whole report");
    assert.doesNotMatch(filteredTable, /CGA-2x3f/);

    // A tag resolves to its digest; no tag means latest (v3, which has no report).
    assert.deepEqual(ids(await json<ReportJson>(["vulns", "report", `acme/app@${v2.digest}`])), [
      "CVE-2026-20001",
      "CVE-2026-20002",
      "GHSA-abcd-1234-wxyz",
    ]);
    await ok(["images", "tags", "create", "acme/app:old", "--digest", v1.digest]);
    assert.equal((await json<ReportJson>(["vulns", "report", "acme/app:old"])).id, full.id);
  });

  it("vulns report: no report exits 4, bad input 2, unknown image 4, another organization's caller 5", async () => {
    await bin.fails(
      ["vulns", "report", "acme/app"],
      4,
      new RegExp(`NOT_FOUND: acme/app@${v3.digest} has no vulnerability report`),
    );
    await fails(["vulns", "report", "acme/app:nope"], 4, /NOT_FOUND/);
    await fails(["vulns", "report", "acme/nothing:latest"], 4, /repository "acme\/nothing" not found/);
    await fails(["vulns", "report", "app"], 2, /is not an image/);
    await fails(
      ["vulns", "report", `acme/app@${v1.digest}`, "--severity", "severe"],
      2,
      /--severity must be one of critical, high, medium, low, unknown/,
    );
    await bin.fails(["vulns", "report"], 2, /missing required argument 'image'/);

    const eve = (await registeredPerson(wharf, "eve")).token;
    const repo = await json<{ uid: string }>(["images", "repos", "describe", "acme/app"]);
    // By uid (no name resolution to stop at): the report itself is refused.
    await fails(["vulns", "report", `${repo.uid}@${v1.digest}`], 5, /PERMISSION_DENIED/, {
      WHARF_TOKEN: eve,
    });
  });

  it("images history: vulnerability counts of the digests that have a report", async () => {
    const history = await json<{ digest: string; vulnerabilities?: Record<string, number> }[]>([
      "images",
      "history",
      "acme/app:latest",
    ]);
    assert.deepEqual(
      history.map((h) => [h.digest, h.vulnerabilities]),
      [
        [v1.digest, { critical: 1, high: 1, medium: 1, low: 1 }],
        [v2.digest, { high: 1, medium: 1, low: 1 }],
        [v3.digest, undefined],
      ],
    );
    const table = await ok(["images", "history", "acme/app:latest", "-o", "table"]);
    assert.match(table, /SIZE\s+│ VULNERABILITIES/);
    assert.match(table, /critical 1, high 1, medium 1, low 1/);
    assert.match(table, /│ high 1, medium 1, low 1/);
  });

  it("images history and diff leave vulnerabilities out for a caller who may not read reports; vulns report exits 5", async () => {
    const role = await json<{ uid: string }>([
      "iam",
      "roles",
      "create",
      "puller-without-reports",
      "--parent",
      "acme",
      "--capability",
      "CAP_REPO_BLOBS_GET,CAP_IAM_GROUPS_LIST,CAP_REPO_LIST,CAP_MANIFEST_LIST,CAP_REFERRERS_LIST,CAP_TAG_LIST,CAP_MANIFEST_METADATA_LIST",
    ]);
    const { uid: rita, token: ritaToken } = await registeredPerson(wharf, "rita");
    await ok(["iam", "role-bindings", "create", "--parent", "acme", "--identity", rita, "--role", role.uid]);
    const asRita = { WHARF_TOKEN: ritaToken };
    const history = JSON.parse(await ok(["images", "history", "acme/app:latest", "-o", "json"], asRita)) as {
      digest: string;
      architectures: string[];
      vulnerabilities?: unknown;
    }[];
    assert.deepEqual(
      history.map((h) => [h.digest, h.architectures, h.vulnerabilities]),
      [
        [v1.digest, ["amd64"], undefined],
        [v2.digest, ["amd64"], undefined],
        [v3.digest, ["amd64"], undefined],
      ],
    );
    const diff = JSON.parse(
      await ok(["images", "diff", `acme/app@${v1.digest}`, `acme/app@${v2.digest}`, "-o", "json"], asRita),
    ) as { kind: string }[];
    assert.deepEqual([...new Set(diff.map((c) => c.kind))], ["layer"]);
    await fails(["vulns", "report", `acme/app@${v1.digest}`], 5, /PERMISSION_DENIED/, asRita);
  });

  it("images diff: vulnerabilities only one image has, when both have a report", async () => {
    const diff = await json<
      { kind: string; change: string; id?: string; severity?: string; digest?: string }[]
    >(["images", "diff", `acme/app@${v1.digest}`, `acme/app@${v2.digest}`]);
    assert.deepEqual(
      diff
        .filter((c) => c.kind === "layer")
        .map((c) => [c.change, c.digest])
        .sort(),
      [
        ["+", v2.layerDigests[0]],
        ["-", v1.layerDigests[0]],
      ],
    );
    assert.deepEqual(
      diff.filter((c) => c.kind === "vulnerability").map((c) => [c.change, c.id, c.severity]),
      [
        ["-", "CVE-2026-10003", "critical"],
        ["-", "CGA-2x3f-7c9q-m4hw", "high"],
        ["-", "CVE-2026-10004", "low"],
        ["+", "CVE-2026-20001", "high"],
        ["+", "CVE-2026-20002", "low"],
      ],
      "GHSA-abcd-1234-wxyz is in both",
    );
    const table = await ok(["images", "diff", `acme/app@${v1.digest}`, "acme/app:old", "-o", "table"]);
    assert.doesNotMatch(table, /vulnerability/, "the same image: nothing differs");
    const withV2 = await ok([
      "images",
      "diff",
      `acme/app@${v1.digest}`,
      `acme/app@${v2.digest}`,
      "-o",
      "table",
    ]);
    assert.match(withV2, /│ \+\s+│ vulnerability\s+│\s+│ CVE-2026-20001\s+│ high/);
    // v3 has no report: layers only.
    const noReport = await json<{ kind: string }[]>([
      "images",
      "diff",
      `acme/app@${v2.digest}`,
      "acme/app:latest",
    ]);
    assert.ok(noReport.length > 0);
    assert.deepEqual([...new Set(noReport.map((c) => c.kind))], ["layer"]);
  });

  it("advisories list with each filter and --limit, describe by id or uid; bad input exits 2 or 4", async () => {
    assert.deepEqual(await json<unknown[]>(["advisories", "list"]), []);
    const imported = await bin.wharfCli([
      "import",
      "advisories",
      "--data-dir",
      wharf.dataDir,
      join(ADVISORIES, "yaml"),
    ]);
    assert.equal(imported.code, 0, imported.stderr);
    const listed = async (...flags: string[]) =>
      (await json<AdvisoryJson[]>(["advisories", "list", ...flags])).map((a) => a.advisoryId).sort();
    // Two files: curlish's three advisories and sample's three (one with a legacy CVE id).
    const curlish = ["CGA-6g7h-8j9m-2p3q", "CGA-7h8j-9m2p-3q4r", "CGA-8j9m-2p3q-4r5v"];
    const all = ["CGA-4c5f-6g7h-8j9m", "CGA-5f6g-7h8j-9m2p", ...curlish].sort();
    const legacy = await listed("--artifact", "sample", "--latest-event", "fix-not-planned");
    assert.equal(legacy.length, 1);
    assert.match(legacy[0] ?? "", /^WGA-/);
    assert.deepEqual(await listed(), [...all, ...legacy].sort());
    assert.deepEqual(await listed("--artifact", "curlish"), curlish);
    assert.deepEqual(await listed("--artifact", "other,curlish"), curlish);
    assert.deepEqual(await listed("--artifact", "other"), []);
    assert.deepEqual(await listed("--cve", "CVE-2025-30002"), ["CGA-7h8j-9m2p-3q4r"]);
    assert.deepEqual(await listed("--cve", "CVE-2025-30001", "--cve", "CVE-2025-30003"), [
      "CGA-6g7h-8j9m-2p3q",
      "CGA-8j9m-2p3q-4r5v",
    ]);
    assert.deepEqual(await listed("--query", "ghsa-8q9r"), ["CGA-7h8j-9m2p-3q4r"]);
    assert.deepEqual(await listed("--latest-event", "fixed"), ["CGA-4c5f-6g7h-8j9m", "CGA-6g7h-8j9m-2p3q"]);
    assert.deepEqual(await listed("--latest-event", "false-positive-determination"), [
      "CGA-5f6g-7h8j-9m2p",
      "CGA-7h8j-9m2p-3q4r",
    ]);
    assert.deepEqual(await listed("--latest-event", "fixed", "--artifact", "sample"), ["CGA-4c5f-6g7h-8j9m"]);
    assert.deepEqual(await listed("--latest-event", "fixed", "--cve", "CVE-2025-30002"), []);
    assert.equal((await listed("--limit", "2")).length, 2);
    const table = await ok(["advisories", "list", "--cve", "CVE-2025-30001", "-o", "table"]);
    assert.match(table, /UID.*ADVISORY.*ARTIFACT.*COMPONENT.*ALIASES.*LATEST EVENT/);
    assert.match(table, /CGA-6g7h-8j9m-2p3q.*curlish.*CVE-2025-30001, GHSA-7p8q-9r2v-fghj.*fixed/);

    const byId = await json<AdvisoryJson>(["advisories", "describe", "CGA-6g7h-8j9m-2p3q"]);
    assert.equal(byId.artifactName, "curlish");
    assert.equal(byId.events?.length, 2);
    assert.equal(
      (await json<AdvisoryJson>(["advisories", "describe", byId.uid])).advisoryId,
      "CGA-6g7h-8j9m-2p3q",
    );
    assert.equal(await ok(["advisories", "list", "--cve", "CVE-2025-30001", "-o", "id"]), `${byId.uid}\n`);

    await fails(
      ["advisories", "describe", "CGA-zzzz-zzzz-zzzz"],
      4,
      /NOT_FOUND: advisory "CGA-zzzz-zzzz-zzzz" not found/,
    );
    await fails(["advisories", "describe", "0".repeat(40)], 4, /NOT_FOUND/);
    // An OSV record over two packages is one advisory per artifact: describe asks which.
    const osv = await wharfCli([
      "import",
      "advisories",
      "--data-dir",
      wharf.dataDir,
      join(ADVISORIES, "osv"),
    ]);
    assert.equal(osv.code, 0, osv.stderr);
    await fails(
      ["advisories", "describe", "CGA-2f3q-4c5v-8w9x"],
      2,
      /covers 2 artifacts, say which with --artifact: libexample, libexample-dev/,
    );
    assert.equal(
      (
        await json<AdvisoryJson>([
          "advisories",
          "describe",
          "CGA-2f3q-4c5v-8w9x",
          "--artifact",
          "libexample-dev",
        ])
      ).artifactName,
      "libexample-dev",
    );
    await fails(
      ["advisories", "list", "--latest-event", "bogus"],
      2,
      /--latest-event must be one of detection, /,
    );
    await fails(["advisories", "list", "--limit", "0"], 2, /--limit must be a positive whole number/);
    await fails(["advisories", "list", "--order-by", "name"], 1, /INVALID_ARGUMENT/);
    await fails(["advisories", "list"], 5, /UNAUTHENTICATED/, { WHARF_TOKEN: "not-a-token" });
  });

  it("help says --severity is a minimum; completions know the new nouns", async () => {
    assert.match(await ok(["vulns", "report", "--help"]), /--severity <level>\s+a MINIMUM severity/);
    const bash = await ok(["completion", "bash"]);
    assert.match(bash, /vulns/);
    assert.match(bash, /advisories/);
    assert.match(await ok(["--help"]), /wharf vulns <command>/);
    assert.match(await ok(["vulns", "--help"]), /\n {2}report \[options\] <image>/);
  });
});
