import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  advisoryIdsOf,
  deriveAdvisoryId,
  isAdvisoryIdShaped,
} from "../../../src/advisories/advisory-identity.js";
import { scoreCvss } from "../../../src/advisories/cvss.js";

describe("advisory ids", () => {
  it("keeps CGA and WGA ids over the CGA alphabet, never GHSA ids of the same shape", () => {
    assert.equal(isAdvisoryIdShaped("CGA-4rf5-x4gx-jvf8"), true);
    assert.equal(isAdvisoryIdShaped("WGA-2222-3333-4444"), true);
    assert.equal(isAdvisoryIdShaped("GHSA-2w87-6hh6-mqrj"), false, "an upstream id, an alias");
    assert.equal(isAdvisoryIdShaped("CGA-abcd-efgh-ijkl"), false, "letters outside the alphabet");
    assert.equal(isAdvisoryIdShaped("CGA-2222-3333"), false);
    assert.deepEqual(advisoryIdsOf("wolfi", "p", "CGA-4rf5-x4gx-jvf8"), {
      advisoryId: "CGA-4rf5-x4gx-jvf8",
      legacyAdvisoryId: "",
    });
  });

  it("derives the same WGA id for the same record and package, another for another package", () => {
    const a = deriveAdvisoryId("pypi", "requests", "PYSEC-2023-74");
    assert.match(a, /^WGA(-[23456789cfghjmpqrvwx]{4}){3}$/);
    assert.equal(deriveAdvisoryId("pypi", "requests", "PYSEC-2023-74"), a);
    assert.notEqual(deriveAdvisoryId("pypi", "urllib3", "PYSEC-2023-74"), a);
    assert.deepEqual(advisoryIdsOf("pypi", "requests", "PYSEC-2023-74"), {
      advisoryId: a,
      legacyAdvisoryId: "PYSEC-2023-74",
    });
  });
});

describe("scoreCvss", () => {
  it("scores v2, v3.0, v3.1 and v4.0 vectors with their qualitative level", () => {
    const score = (type: string, vector: string) => {
      const s = scoreCvss(type, vector);
      return "error" in s ? s.error : [s.baseScore, s.level];
    };
    assert.deepEqual(score("CVSS_V2", "AV:N/AC:L/Au:N/C:N/I:N/A:P"), [5, "medium"]);
    assert.deepEqual(score("CVSS_V3", "CVSS:3.0/AV:N/AC:L/PR:N/UI:R/S:U/C:L/I:N/A:N"), [4.3, "medium"]);
    assert.deepEqual(score("CVSS_V3", "CVSS:3.1/AV:L/AC:H/PR:H/UI:R/S:U/C:N/I:N/A:N"), [0, "none"]);
    assert.deepEqual(score("CVSS_V4", "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N"), [
      9.3,
      "critical",
    ]);
  });

  it("refuses vectors it cannot score, saying why", () => {
    assert.match(
      (
        scoreCvss("CVSS_V3", "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N") as {
          error: string;
        }
      ).error,
      /is not a CVSS_V3 vector/,
    );
    assert.match((scoreCvss("CVSS_V2", "CVSS:3.1/AV:N") as { error: string }).error, /not a CVSS_V2 vector/);
    assert.match(
      (scoreCvss("CVSS_V3", "CVSS:3.1/AV:N") as { error: string }).error,
      /base metrics are missing/,
    );
    assert.match(
      (scoreCvss("CVSS_V3", "CVSS:3.1/AV:Z/AC:L") as { error: string }).error,
      /Unknown component value Z/,
    );
    assert.match((scoreCvss("Ubuntu", "high") as { error: string }).error, /not a Ubuntu vector/);
  });
});
