import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import type { VexStatementRow } from "../../../../src/storage/vex-store.js";
import type { VulnMatchRecord } from "../../../../src/storage/vuln-report-store.js";
import { statementRecords, vexVerdicts } from "../../../../src/vulnreports/vex/applicability.js";
import { parseOpenVex } from "../../../../src/vulnreports/vex/openvex.js";
import { purlCovers } from "../../../../src/vulnreports/vex/purl.js";

const fixture = (name: string) => readFileSync(new URL(`../../../fixtures/vex/${name}`, import.meta.url));
const IMAGE = `sha256:${"a".repeat(64)}`;

function match(id: string, extra: Partial<VulnMatchRecord> = {}): VulnMatchRecord {
  return {
    vulnerabilityId: id,
    aliases: [],
    severity: "HIGH",
    cvss: [],
    description: "",
    relatedUrls: [],
    fixVersions: [],
    fixState: "UNKNOWN",
    packageName: "pkg",
    packageVersion: "1",
    packageType: "apk",
    purl: "pkg:apk/wolfi/pkg@1?arch=x86_64&distro=wolfi-20230201",
    locations: [],
    ...extra,
  };
}

let n = 0;
function rows(file: string, createTime = ++n): VexStatementRow[] {
  return statementRecords(parseOpenVex(fixture(file)), IMAGE)
    .map((s, ordinal) => ({ ...s, documentUid: file, ordinal, repoUid: "r", digest: IMAGE, createTime }))
    .filter((s) => s.applies);
}

describe("VEX applicability", () => {
  it("a statement applies when a product names the image by digest or OCI purl, with that product's subcomponents", () => {
    const records = statementRecords(parseOpenVex(fixture("openvex-not-affected.json")), IMAGE);
    assert.deepEqual(
      records.map((r) => [r.vulnerability, r.applies, r.subcomponents]),
      [
        ["CVE-2026-10003", true, ["pkg:maven/test.example/logkit@1.2.0"]],
        ["CVE-2026-10001", true, []],
        ["CVE-2026-20002", false, []],
        ["GHSA-abcd-1234-wxyz", true, []],
      ],
    );
    const other = statementRecords(
      parseOpenVex(fixture("openvex-not-affected.json")),
      `sha256:${"c".repeat(64)}`,
    );
    assert.deepEqual(
      other.map((r) => r.applies),
      [false, false, true, false],
    );
  });

  it("matches the vulnerability by id or alias, and subcomponents by purl", () => {
    const statements = rows("openvex-not-affected.json");
    const verdicts = vexVerdicts(
      [
        match("CVE-2026-10003", { purl: "pkg:maven/test.example/logkit@1.2.0" }),
        match("CVE-2026-10003", { purl: "pkg:maven/test.example/otherlib@1.2.0" }),
        match("CGA-2x3f-7c9q-m4hw", { aliases: ["CVE-2026-10001"] }),
        match("CVE-2026-10001"),
        match("GHSA-abcd-1234-wxyz"),
        match("CVE-2026-20002"),
        match("CVE-2026-99999"),
      ],
      statements,
    );
    assert.deepEqual(
      verdicts.map((v) => v && [v.suppressed, v.statement.status, v.statement.justification]),
      [
        [true, "not_affected", "vulnerable_code_not_in_execute_path"],
        undefined,
        [true, "fixed", ""],
        [true, "fixed", ""],
        [false, "under_investigation", ""],
        undefined,
        undefined,
      ],
    );
    // A statement's alias names the match's id too.
    const byAlias = vexVerdicts([match("CGA-2x3f-7c9q-m4hw")], statements);
    assert.equal(byAlias[0]?.suppressed, true);
  });

  it("a later affected statement takes a suppression back; a newer timestamp wins whatever the storage order", () => {
    const m = match("CVE-2026-10003", { purl: "pkg:maven/test.example/logkit@1.2.0" });
    const first = rows("openvex-not-affected.json", 1);
    const later = rows("openvex-affected-later.json", 2);
    assert.equal(vexVerdicts([m], first)[0]?.suppressed, true);
    const verdict = vexVerdicts([m], [...first, ...later])[0];
    assert.equal(verdict?.suppressed, false);
    assert.equal(verdict?.statement.status, "affected");
    // Stored the other way round: the affected statement is still newer by its timestamp.
    assert.equal(vexVerdicts([m], [...later, ...first])[0]?.statement.status, "affected");
    // An older not_affected document stored later does not win over a newer affected one.
    const stale = first.map((s) => ({ ...s, createTime: 3 }));
    assert.equal(vexVerdicts([m], [...later, ...stale])[0]?.suppressed, false);
    // Equal times: the one stored later decides.
    const same = later.map((s) => ({ ...s, effectiveTime: first[0]?.effectiveTime ?? 0 }));
    assert.equal(vexVerdicts([m], [...same, ...first])[0]?.suppressed, true);
    assert.equal(vexVerdicts([m], [...first, ...same])[0]?.suppressed, false);
  });

  it("compares purls ignoring qualifier order and the scanner's extra qualifiers", () => {
    const found = "pkg:apk/wolfi/busybox@1.36.1-r2?arch=x86_64&distro=wolfi-20230201";
    assert.ok(purlCovers("pkg:apk/wolfi/busybox@1.36.1-r2", found));
    assert.ok(purlCovers("pkg:apk/wolfi/busybox", found), "no version: any version");
    assert.ok(purlCovers("pkg:apk/wolfi/busybox@1.36.1-r2?distro=wolfi-20230201&arch=x86_64", found));
    assert.ok(!purlCovers("pkg:apk/wolfi/busybox@1.36.1-r2?arch=aarch64", found));
    assert.ok(!purlCovers("pkg:apk/wolfi/busybox@1.36.1-r3", found));
    assert.ok(!purlCovers("pkg:apk/alpine/busybox@1.36.1-r2", found));
    assert.ok(purlCovers("pkg:golang/example.test/proto@v0.20.0", "pkg:golang/example.test/proto@v0.20.0"));
    assert.ok(!purlCovers("pkg:golang/example.test/proto@v0.20.0", ""));
  });
});
