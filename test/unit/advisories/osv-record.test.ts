import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { advisoryUid, isAdvisoryIdShaped } from "../../../src/advisories/advisory-identity.js";
import { mapOsvRecord } from "../../../src/advisories/formats/osv-record.js";

const FIXTURES = new URL("../../fixtures/advisories/", import.meta.url);
const load = (path: string): unknown => JSON.parse(readFileSync(new URL(path, FIXTURES), "utf8"));
const map = (path: string, metadataOnly = false) => {
  const result = mapOsvRecord(load(path), "$", { author: "importer", metadataOnly });
  if (!result.ok) assert.fail(`${path}: ${JSON.stringify(result.issue)}`);
  return result.value;
};

describe("mapOsvRecord", () => {
  it("a Chainguard fixed record: one advisory per package, origin first, related ids become aliases", () => {
    const { advisories, metadata } = map("osv/CGA-2f3q-4c5v-8w9x.json");
    assert.equal(metadata, undefined, "a CGA record is no upstream metadata");
    assert.deepEqual(
      advisories.map((a) => [a.artifactName, a.originPackage, a.artifactType, a.packageNamespace]),
      [
        ["libexample", "libexample", "apk", "chainguard"],
        ["libexample-dev", "libexample", "apk", "chainguard"],
      ],
    );
    const [origin] = advisories;
    assert.equal(origin?.advisoryId, "CGA-2f3q-4c5v-8w9x");
    assert.equal(origin?.legacyAdvisoryId, "");
    assert.equal(origin?.uid, advisoryUid("CGA-2f3q-4c5v-8w9x", "libexample"));
    assert.deepEqual(origin?.aliases, ["CVE-2025-10001", "GHSA-2c3f-4g5h-6j7m"], "own id left out");
    assert.deepEqual(
      origin?.events.map((e) => [e.type, e.data, e.reviewState, e.author]),
      [["fixed", { fixedVersion: "1.4.2-r1" }, "approved", "importer"]],
    );
    assert.equal(origin?.createTime, Date.parse("2025-02-20T08:00:00Z"));
    assert.equal(origin?.updateTime, Date.parse("2025-03-04T10:15:00Z"));
    assert.ok(origin?.events[0]?.uid.startsWith(`${origin.uid}/`));
  });

  it("database_specific.false_positive is a false-positive determination, not a fix of version 0", () => {
    const [fp] = map("osv/CGA-3g4h-5j6m-7p8q.json").advisories;
    assert.deepEqual(
      fp?.events.map((e) => e.type),
      ["false-positive-determination"],
    );
  });

  it("a GHSA record is an advisory with a derived WGA id and upstream metadata with a scored CVSS", () => {
    const { advisories, metadata } = map("osv/GHSA-4h5j-6m7p-8q9r.json");
    const [a] = advisories;
    assert.ok(a && isAdvisoryIdShaped(a.advisoryId) && a.advisoryId.startsWith("WGA-"), a?.advisoryId);
    assert.equal(a?.legacyAdvisoryId, "GHSA-4h5j-6m7p-8q9r");
    assert.deepEqual(a?.aliases, ["CVE-2025-10003", "GHSA-4h5j-6m7p-8q9r"]);
    assert.deepEqual(
      [a?.artifactType, a?.componentName, a?.componentType],
      ["library", "left-padder", "npm"],
    );
    assert.deepEqual(
      a?.severities.map((s) => [s.baseScore, s.level]),
      [[9.8, "critical"]],
    );
    assert.equal(metadata?.id, "GHSA-4h5j-6m7p-8q9r");
    assert.equal(metadata?.summary, "Prototype pollution in left-padder");
    assert.deepEqual(
      metadata?.references.map((r) => r.type),
      ["ADVISORY", "FIX", "PACKAGE", "WEB"],
    );
    // Deterministic: the same record maps to the same ids again.
    assert.equal(map("osv/GHSA-4h5j-6m7p-8q9r.json").advisories[0]?.advisoryId, a?.advisoryId);
  });

  it("keeps what the API has no field for (versions) as findings", () => {
    const [a] = map("osv/PYSEC-2025-11.json").advisories;
    assert.deepEqual(JSON.parse(a?.findings ?? "{}").versions, ["0.9.0", "0.9.1", "0.9.2"]);
    assert.equal(a?.componentType, "python");
  });

  it("last_affected without a fix is a true-positive determination naming the version", () => {
    const [a] = map("osv/GHSA-5j6m-7p8q-9r2v.json").advisories;
    assert.deepEqual(
      a?.events.map((e) => [e.type, e.data]),
      [["true-positive-determination", { note: "affected up to and including 3.2.8" }]],
    );
  });

  it("withdrawn sets deleteTime; upstream ids become aliases; two packages make two advisories", () => {
    assert.equal(map("osv/GO-2025-0007.json").advisories[0]?.deleteTime, Date.parse("2025-07-08T09:00:00Z"));
    const [debian] = map("osv/DEBIAN-DSA-5901-1.json").advisories;
    assert.deepEqual(debian?.aliases, ["CVE-2025-10007", "CVE-2025-10008", "DEBIAN-DSA-5901-1"]);
    assert.equal(debian?.packageNamespace, "debian");
    assert.equal(debian?.artifactType, "os-package");
    const two = map("osv/OSV-2025-101.json").advisories;
    assert.deepEqual(
      two.map((a) => a.artifactName),
      ["example.org/codec", "codec-rs"],
    );
    assert.notEqual(two[0]?.advisoryId, two[1]?.advisoryId, "ids are derived per package");
  });

  it("metadata records: CVSS v2, v3.1 and v4 vectors are scored by the calculator", () => {
    const cve = map("vulnmeta/CVE-2025-10003.json", true).metadata;
    assert.deepEqual(
      cve?.severities.map((s) => [s.type, s.baseScore, s.level]),
      [
        ["CVSS_V2", 7.5, "high"],
        ["CVSS_V3", 9.8, "critical"],
      ],
    );
    assert.deepEqual(
      cve?.references.map((r) => r.type),
      ["ADVISORY", "REPORT", "DISCUSSION"],
    );
    const ghsa = map("vulnmeta/GHSA-9r2v-3w4x-hjmp.json", true).metadata;
    assert.deepEqual(
      ghsa?.severities.map((s) => [s.type, s.baseScore, s.level]),
      [["CVSS_V4", 9.3, "critical"]],
    );
  });

  it("rejects broken records with the JSON path and field of the problem", () => {
    const issue = (value: unknown, base = "$") => {
      const r = mapOsvRecord(value, base, { author: "x" });
      assert.equal(r.ok, false);
      return r.ok ? undefined : r.issue;
    };
    assert.deepEqual(issue(load("malformed/introduced-and-fixed.json")), {
      location: "$.affected[0].ranges[0].events[0]",
      field: "events",
      message: "must match exactly one schema in oneOf",
    });
    assert.deepEqual(issue(load("malformed/unknown-ecosystem.json")), {
      location: "$.affected[0].package.ecosystem",
      field: "ecosystem",
      message: 'unknown OSV ecosystem "Gopher"',
    });
    const batch = load("malformed/mixed-batch.json") as unknown[];
    assert.equal(mapOsvRecord(batch[0], "$[0]", { author: "x" }).ok, true);
    const bad = issue(batch[1], "$[1]");
    assert.equal(bad?.location, "$[1].severity[0].score");
    assert.match(bad?.message ?? "", /Unknown component value Q/);
    assert.equal(issue({ id: "X-1" })?.field, "modified");
    assert.equal(
      issue({ id: "X-1", modified: "2025-01-01T00:00:00Z" })?.field,
      "affected",
      "nothing to import",
    );
    assert.equal(issue([1, 2])?.location, "$");
    assert.equal(
      issue({ id: "X", modified: "2025-01-01T00:00:00Z", references: [{ type: "WEB", url: "not a url" }] })
        ?.location,
      "$.references[0].url",
    );
  });
});
