import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { UsageError } from "../../../../src/cli/client/output.js";
import {
  countBySeverity,
  countsCell,
  filterMatches,
  isFixable,
  parseMinimumSeverity,
  summarize,
  vulnerabilityChanges,
} from "../../../../src/cli/client/vuln-summary.js";
import {
  Fix_State,
  Vulnerability_Severity as Severity,
  VulnerabilityMatchSchema,
} from "../../../../src/gen/platform/registry/v1/registry_pb.js";

function match(
  id: string,
  severity: Severity,
  pkg: string,
  fix: { versions?: string[]; state?: Fix_State } = {},
) {
  return create(VulnerabilityMatchSchema, {
    vulnerability: { id, severity },
    pkg: { name: pkg, version: "1.0" },
    fix: { versions: fix.versions ?? [], state: fix.state ?? Fix_State.NOT_FIXED },
  });
}

const critical = match("CVE-1", Severity.CRITICAL, "a");
const highFixed = match("CVE-2", Severity.HIGH, "b", { versions: ["2.0"], state: Fix_State.FIXED });
const highAgain = match("CVE-2", Severity.HIGH, "c", { versions: ["3.0"], state: Fix_State.FIXED });
const medium = match("GHSA-x", Severity.MEDIUM, "d", { state: Fix_State.WONT_FIX });
const low = match("CVE-3", Severity.LOW, "e");
const unknown = match("CVE-4", Severity.UNKNOWN, "f");
const all = [critical, highFixed, highAgain, medium, low, unknown];

describe("vulnerability report summaries", () => {
  it("--severity is a minimum: high keeps high and critical; case does not matter; bad names are usage errors", () => {
    assert.deepEqual(filterMatches(all, { minimumSeverity: parseMinimumSeverity("HIGH") }), [
      critical,
      highFixed,
      highAgain,
    ]);
    assert.equal(filterMatches(all, { minimumSeverity: parseMinimumSeverity("unknown") }).length, 6);
    assert.deepEqual(filterMatches(all, { minimumSeverity: parseMinimumSeverity("critical") }), [critical]);
    assert.throws(
      () => parseMinimumSeverity("severe"),
      (err: Error) =>
        err instanceof UsageError && /--severity must be one of critical, high/.test(err.message),
    );
  });

  it("fixable means a fixed version is known; the filters combine", () => {
    assert.equal(isFixable(highFixed), true);
    assert.equal(isFixable(medium), false, "won't fix has no fixed version");
    assert.equal(
      isFixable(match("X", Severity.LOW, "z", { versions: ["1.1"] })),
      true,
      "versions alone count",
    );
    assert.deepEqual(filterMatches(all, { fixable: true }), [highFixed, highAgain]);
    assert.deepEqual(
      filterMatches(all, { fixable: true, minimumSeverity: parseMinimumSeverity("critical") }),
      [],
    );
    assert.deepEqual(filterMatches(all, {}), all);
  });

  it("summarizes matches and fixable matches per severity, worst first, zeros included", () => {
    assert.deepEqual(summarize(all), [
      { severity: "critical", matches: 1, fixable: 0 },
      { severity: "high", matches: 2, fixable: 2 },
      { severity: "medium", matches: 1, fixable: 0 },
      { severity: "low", matches: 1, fixable: 0 },
      { severity: "unknown", matches: 1, fixable: 0 },
    ]);
    assert.deepEqual(
      summarize([]).map((r) => r.matches),
      [0, 0, 0, 0, 0],
    );
  });

  it("counts distinct ids per severity (one id in two packages counts once, at its worst)", () => {
    const worse = match("CVE-1", Severity.LOW, "other");
    assert.deepEqual(countBySeverity([...all, worse]), {
      critical: 1,
      high: 1,
      medium: 1,
      low: 1,
      unknown: 1,
    });
    assert.equal(countsCell({ high: 2, critical: 1 }), "critical 1, high 2");
    assert.equal(countsCell({}), "none");
    assert.equal(countsCell(undefined), "");
  });

  it("vulnerability changes: ids only the first has (-), then only the second (+), worst first", () => {
    const second = [highFixed, match("CVE-9", Severity.LOW, "g"), match("CVE-8", Severity.CRITICAL, "h")];
    assert.deepEqual(vulnerabilityChanges(all, second), [
      { change: "-", id: "CVE-1", severity: "critical" },
      { change: "-", id: "GHSA-x", severity: "medium" },
      { change: "-", id: "CVE-3", severity: "low" },
      { change: "-", id: "CVE-4", severity: "unknown" },
      { change: "+", id: "CVE-8", severity: "critical" },
      { change: "+", id: "CVE-9", severity: "low" },
    ]);
    assert.deepEqual(vulnerabilityChanges(all, all), []);
  });
});
