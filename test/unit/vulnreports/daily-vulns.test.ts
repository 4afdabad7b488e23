import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DAY_MS, startOfDay } from "../../../src/core/utc-day.js";
import type { VulnMatchRecord, VulnReportRow } from "../../../src/storage/vuln-report-store.js";
import { reportForDay, vulnerabilitiesOf } from "../../../src/vulnreports/daily-vulns.js";

const DAY = Date.UTC(2026, 10, 20);

function report(uid: string, createTime: number): VulnReportRow {
  return {
    uid,
    repoUid: "r",
    digest: "d",
    scanner: "GRYPE",
    scannerVersion: "",
    envelope: "bare",
    rawDigest: "x",
    rawSize: 1,
    matchCount: 0,
    createTime,
    current: false,
  };
}

function match(id: string, severity: string, aliases: string[] = []): VulnMatchRecord {
  return {
    vulnerabilityId: id,
    aliases,
    severity,
    cvss: [],
    description: "",
    relatedUrls: [],
    fixVersions: [],
    fixState: "UNKNOWN",
    packageName: "p",
    packageVersion: "1",
    packageType: "apk",
    purl: "",
    locations: [],
  };
}

describe("daily vulnerabilities", () => {
  it("takes the newest report stored before the day ended, else the first one stored later", () => {
    const newestFirst = [
      report("late", DAY + 3 * DAY_MS),
      report("mid", DAY + DAY_MS + 5),
      report("early", DAY + 10),
    ];
    assert.equal(reportForDay(newestFirst, DAY + DAY_MS)?.uid, "early");
    assert.equal(reportForDay(newestFirst, DAY + 2 * DAY_MS)?.uid, "mid");
    assert.equal(reportForDay(newestFirst, DAY)?.uid, "early", "before any report: the first one stored");
    assert.equal(reportForDay([], DAY), undefined);
  });

  it("merges the matches of one vulnerability: aliases once, the highest severity", () => {
    const vulns = vulnerabilitiesOf([
      match("CVE-1", "LOW", ["GHSA-1"]),
      match("CVE-1", "CRITICAL", ["GHSA-1", "CGA-1"]),
      match("CVE-2", "bogus"),
    ]);
    assert.deepEqual(
      [...vulns.values()],
      [
        { id: "CVE-1", aliases: ["GHSA-1", "CGA-1"], severity: "CRITICAL" },
        { id: "CVE-2", aliases: [], severity: "UNKNOWN" },
      ],
    );
  });

  it("names a day by its 00:00 UTC", () => {
    assert.equal(startOfDay(DAY + DAY_MS - 1), DAY);
    assert.equal(startOfDay(DAY), DAY);
  });
});
