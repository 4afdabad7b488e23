import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { advisoryUid } from "../../../src/advisories/advisory-identity.js";
import { parseAdvisoriesYaml } from "../../../src/advisories/formats/advisories-yaml.js";

const FIXTURES = new URL("../../fixtures/advisories/", import.meta.url);
const text = (path: string) => readFileSync(new URL(path, FIXTURES), "utf8");

describe("parseAdvisoriesYaml", () => {
  it("reads all seven event types and the three detection kinds", () => {
    const parsed = parseAdvisoriesYaml(text("yaml/sample.advisories.yaml"), { author: "importer" });
    assert.ok(parsed.ok);
    const { advisories, rejected } = parsed.value;
    assert.deepEqual(rejected, []);
    assert.equal(advisories.length, 3);
    const [first, second, third] = advisories;
    assert.equal(first?.uid, advisoryUid("CGA-4c5f-6g7h-8j9m", "sample"));
    assert.deepEqual(first?.aliases, ["CVE-2025-20001", "GHSA-6m7p-8q9r-cfgh"]);
    assert.deepEqual(
      first?.events.map((e) => e.type),
      [
        "detection",
        "detection",
        "detection",
        "true-positive-determination",
        "pending-upstream-fix",
        "analysis-not-planned",
        "fixed",
      ],
    );
    assert.deepEqual(first?.events[0]?.data, { manual: {} });
    assert.deepEqual(first?.events[1]?.data, {
      nvdapi: {
        cpeSearched: "cpe:2.3:a:*:sample:*:*:*:*:*:*:*:*",
        cpeFound: "cpe:2.3:a:sample_project:sample:*:*:*:*:*:*:*:*",
      },
    });
    assert.equal(
      (first?.events[2]?.data.scanv1 as { subpackage?: string } | undefined)?.subpackage,
      "sample-tools",
    );
    assert.deepEqual(first?.events[6]?.data, { fixedVersion: "1.2.3-r4" });
    assert.deepEqual(
      [first?.componentName, first?.componentType, first?.componentLocation],
      ["golang.org/x/net", "go-module", "/usr/bin/sample-tool"],
      "the component comes from the scan detection",
    );
    assert.equal(first?.createTime, Date.parse("2025-01-02T03:04:05Z"));
    assert.equal(first?.updateTime, Date.parse("2025-01-08T03:04:05Z"));
    assert.deepEqual(second?.events[0]?.data, {
      type: "vulnerable-code-not-included-in-package",
      note: "Only the Windows build contains the affected code.",
    });
    assert.equal(third?.events[0]?.type, "fix-not-planned");
    assert.equal(third?.legacyAdvisoryId, "CVE-2025-20003", "a non-CGA id is kept as the legacy id");
    assert.match(third?.advisoryId ?? "", /^WGA-/);
    assert.equal(first?.packageNamespace, "wolfi");
  });

  it("rejects bad advisories alone, with their YAML path", () => {
    const parsed = parseAdvisoriesYaml(text("malformed/bad-events.advisories.yaml"), { author: "x" });
    assert.ok(parsed.ok);
    assert.deepEqual(
      parsed.value.advisories.map((a) => a.advisoryId),
      ["CGA-9m2p-3q4r-5v6w"],
    );
    assert.deepEqual(
      parsed.value.rejected.map((r) => [r.location, r.field]),
      [
        ["advisories[1].events[1].data.fixed-version", "fixed-version"],
        ["advisories[2].events[0].data.type", "type"],
      ],
    );
  });

  it("refuses files that are no 2.x advisories document", () => {
    const old = parseAdvisoriesYaml(text("malformed/old-schema.advisories.yaml"), { author: "x" });
    assert.deepEqual(old.ok ? undefined : old.issue.field, "schema-version");
    const garbage = parseAdvisoriesYaml("a: [unclosed", { author: "x" });
    assert.equal(garbage.ok, false);
    const noPackage = parseAdvisoriesYaml("schema-version: 2\nadvisories: []\n", { author: "x" });
    assert.equal(noPackage.ok ? undefined : noPackage.issue.location, "package.name");
    const badTime = parseAdvisoriesYaml(
      "schema-version: 2\npackage: {name: p}\nadvisories:\n  - id: CGA-2222-3333-4444\n    events:\n      - {timestamp: soon, type: fixed, data: {fixed-version: '1'}}\n",
      { author: "x" },
    );
    assert.ok(badTime.ok);
    assert.equal(badTime.value.rejected[0]?.location, "advisories[0].events[0].timestamp");
  });
});
