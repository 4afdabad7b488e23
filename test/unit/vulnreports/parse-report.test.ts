import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { VulnReportFormatError } from "../../../src/vulnreports/formats/format-error.js";
import { parseVulnReport } from "../../../src/vulnreports/formats/parse-report.js";
import type { NormalizedReport } from "../../../src/vulnreports/report-model.js";

const FIXTURES = new URL("../../fixtures/vulnreports/", import.meta.url);

function fixture(name: string): Buffer {
  return readFileSync(new URL(name, FIXTURES));
}

/** `bytes` as a stream of `size`-byte chunks, so tokens straddle chunk boundaries. */
async function* chunked(bytes: Uint8Array, size: number): AsyncIterable<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function rejectsFormat(source: Uint8Array | string, pattern: RegExp): Promise<void> {
  await assert.rejects(
    parseVulnReport(typeof source === "string" ? Buffer.from(source) : source),
    (err: unknown) => err instanceof VulnReportFormatError && pattern.test(err.message),
  );
}

function byId(report: NormalizedReport, id: string) {
  const match = report.matches.find((m) => m.vulnerabilityId === id);
  assert.ok(match, `match ${id}`);
  return match;
}

describe("parseVulnReport: Grype", () => {
  it("normalises the four matches, the scanner and the database build time", async () => {
    const report = await parseVulnReport(fixture("grype.json"));
    assert.equal(report.envelope, "bare");
    assert.deepEqual(report.scanner, {
      name: "GRYPE",
      version: "0.87.0",
      dbBuildTime: Date.parse("2026-11-24T01:31:48Z"),
    });
    assert.deepEqual(
      report.matches.map((m) => [m.vulnerabilityId, m.severity, m.fixState, m.packageType]),
      [
        ["CGA-2x3f-7c9q-m4hw", "HIGH", "FIXED", "apk"],
        ["GHSA-abcd-1234-wxyz", "MEDIUM", "FIXED", "go-module"],
        ["CVE-2026-10003", "CRITICAL", "NOT_FIXED", "java-archive"],
        ["CVE-2026-10004", "NEGLIGIBLE", "WONT_FIX", "apk"],
      ],
    );
    const ghsa = byId(report, "GHSA-abcd-1234-wxyz");
    assert.deepEqual(ghsa.aliases, ["CVE-2026-10002"]);
    assert.deepEqual(ghsa.locations, ["/usr/bin/exampled"]);
    assert.equal(ghsa.purl, "pkg:golang/example.test/proto@v0.20.0");
    assert.deepEqual(ghsa.fixVersions, ["0.21.1"]);
    const java = byId(report, "CVE-2026-10003");
    assert.deepEqual(
      java.cvss.map((c) => [c.score, c.version]),
      [
        [10, "3.1"],
        [9.3, "2.0"],
      ],
    );
    assert.equal(java.cvss[0]?.vector, "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H");
    assert.deepEqual(byId(report, "CGA-2x3f-7c9q-m4hw").aliases, ["CVE-2026-10001"]);
  });

  it("gives the same result when the bytes arrive in small chunks", async () => {
    const whole = await parseVulnReport(fixture("grype.json"));
    const streamed = await parseVulnReport(chunked(fixture("grype.json"), 7));
    assert.deepEqual(streamed, whole);
  });

  it("reads an empty Grype report (no matches) as a report with none", async () => {
    const report = await parseVulnReport(
      Buffer.from('{"matches":[],"descriptor":{"name":"grype","version":"0.90.0"}}'),
    );
    assert.equal(report.scanner.name, "GRYPE");
    assert.equal(report.matches.length, 0);
    assert.equal(report.scanner.dbBuildTime, undefined);
  });
});

describe("parseVulnReport: Trivy", () => {
  it("normalises os-pkgs and lang-pkgs results, statuses and CVSS of two sources", async () => {
    const report = await parseVulnReport(fixture("trivy.json"));
    assert.deepEqual(report.scanner, { name: "TRIVY", version: "0.58.1" });
    const tls = byId(report, "CVE-2026-20001");
    assert.equal(tls.fixState, "FIXED");
    assert.deepEqual(tls.fixVersions, ["3.1.4-r0", "3.2.1-r0"]);
    assert.equal(tls.packageType, "alpine");
    assert.deepEqual(
      tls.cvss.map((c) => [c.source, c.version, c.score]),
      [
        ["nvd", "3.1", 7.5],
        ["nvd", "2.0", 5],
        ["redhat", "3.1", 5.9],
      ],
    );
    assert.equal(tls.relatedUrls[0], "https://avd.aquasec.com/nvd/cve-2026-20001");
    assert.equal(byId(report, "CVE-2026-20002").fixState, "WONT_FIX");
    const go = byId(report, "GHSA-abcd-1234-wxyz");
    assert.equal(go.fixState, "NOT_FIXED");
    assert.equal(go.packageType, "gobinary");
    assert.deepEqual(go.locations, ["usr/bin/exampled"]);
    assert.deepEqual(go.aliases, ["CVE-2026-10002"]);
  });

  it("rejects SchemaVersion 1 naming the version it expects", async () => {
    await rejectsFormat(
      fixture("trivy-schema1.json"),
      /SchemaVersion 1 is not supported; expected SchemaVersion 2/,
    );
  });
});

describe("parseVulnReport: cosign vulnerability attestations", () => {
  it("reads the bare predicate, the in-toto statement (no https://) and the DSSE envelope alike", async () => {
    const trivy = await parseVulnReport(fixture("trivy.json"));
    for (const [file, envelope] of [
      ["cosign-vuln-predicate.json", "cosign-predicate"],
      ["cosign-vuln-statement.json", "in-toto-statement"],
      ["cosign-vuln-dsse.json", "dsse-envelope"],
    ] as const) {
      const report = await parseVulnReport(fixture(file));
      assert.equal(report.envelope, envelope, file);
      assert.deepEqual(report.matches, trivy.matches, file);
      assert.equal(report.scanner.name, "TRIVY");
    }
  });

  it("rejects a statement of another predicate type, and a DSSE envelope of another payload type", async () => {
    const statement = JSON.parse(fixture("cosign-vuln-statement.json").toString("utf8"));
    statement.predicateType = "https://slsa.dev/provenance/v1";
    await rejectsFormat(
      JSON.stringify(statement),
      /predicateType "https:\/\/slsa.dev\/provenance\/v1" is not a vulnerability attestation/,
    );
    const dsse = JSON.parse(fixture("cosign-vuln-dsse.json").toString("utf8"));
    dsse.payloadType = "text/plain";
    await rejectsFormat(
      JSON.stringify(dsse),
      /payloadType is "text\/plain"; expected application\/vnd.in-toto\+json/,
    );
    dsse.payloadType = "application/vnd.in-toto+json";
    dsse.payload = "not base64!";
    await rejectsFormat(JSON.stringify(dsse), /payload must be a base64 string/);
  });
});

describe("parseVulnReport: broken input", () => {
  it("rejects truncated JSON, empty input and trailing data as invalid JSON", async () => {
    await rejectsFormat(fixture("truncated.json"), /not valid JSON/);
    await rejectsFormat("", /not valid JSON/);
    await rejectsFormat('{"matches":[]} {"x":1}', /not valid JSON/);
  });

  it("rejects an unknown document saying which formats it expected", async () => {
    await rejectsFormat(
      fixture("unknown.json"),
      /not a vulnerability report.*expected Grype JSON.*Trivy JSON.*cosign/,
    );
    await rejectsFormat("[1,2,3]", /not a vulnerability report/);
    await rejectsFormat('"text"', /not a vulnerability report/);
  });

  it("rejects wrongly typed fields naming the field", async () => {
    await rejectsFormat(
      '{"matches":[{"vulnerability":{"id":5},"artifact":{}}]}',
      /matches\[0\]\.vulnerability\.id must be a string/,
    );
    await rejectsFormat('{"matches":[7]}', /matches\[0\] must be a JSON object/);
    await rejectsFormat(
      '{"SchemaVersion":2,"Results":[{"Type":"alpine","Vulnerabilities":[{"VulnerabilityID":"CVE-1","CVSS":{"nvd":{"V3Score":"high"}}}]}]}',
      /Results\[0\]\.Vulnerabilities\[0\]\.CVSS\.nvd\.V3Score must be a number/,
    );
  });
});
