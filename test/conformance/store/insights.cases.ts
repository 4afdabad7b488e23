import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { newChildUid } from "../../../src/core/uidp.js";
import type { RepoRow } from "../../../src/storage/registry-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { VulnMatchRecord } from "../../../src/storage/vuln-report-store.js";
import type { TestDatabase } from "../../support/databases.js";
import { childUid, groupRow, repoRow, T0 } from "./fixtures.js";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const digest = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;

function match(id: string, severity: string): VulnMatchRecord {
  return {
    vulnerabilityId: id,
    aliases: [],
    severity,
    cvss: [],
    description: "",
    relatedUrls: [],
    fixVersions: [],
    fixState: "UNKNOWN",
    packageName: "pkg",
    packageVersion: "1",
    packageType: "apk",
    purl: "",
    locations: [],
  };
}

/** The dashboard's aggregates: pushes per UTC day from tag history, tags by their report's severities. */
export function insightsCases(db: TestDatabase): void {
  describe("insights", () => {
    let store: Store;
    let org: string;
    let folder: string;
    let app: RepoRow;
    let nested: RepoRow;
    let elsewhere: RepoRow;
    let n = 0;
    const put = (repo: RepoRow, name: string, d: string, now: number) =>
      store.tags.put({
        repoUid: repo.uid,
        name,
        digest: d,
        deprecated: false,
        newUid: newChildUid(repo.uid),
        now,
      });
    const report = async (
      repo: RepoRow,
      d: string,
      scanner: string,
      createTime: number,
      severities: string[],
    ): Promise<string> => {
      const uid = childUid(repo.uid, (++n).toString(16).padStart(16, "0"));
      await store.vulnReports.insert(
        {
          uid,
          repoUid: repo.uid,
          digest: d,
          scanner,
          scannerVersion: "1",
          envelope: "bare",
          rawDigest: digest(9000 + n),
          rawSize: 1,
          matchCount: severities.length,
          createTime,
        },
        severities.map((s, i) => match(`CVE-${n}-${i}`, s)),
      );
      return uid;
    };

    before(async () => {
      store = await db.openFresh();
      const o = groupRow("", "insights-org");
      const f = groupRow(o.uid, "team");
      const other = groupRow("", "insights-other");
      for (const g of [o, f, other]) await store.groups.insert(g);
      org = o.uid;
      folder = f.uid;
      app = repoRow(org, "app");
      nested = repoRow(folder, "svc");
      elsewhere = repoRow(other.uid, "app");
      for (const r of [app, nested, elsewhere]) await store.repos.insert(r);
    });

    it("counts tag moves per UTC day in the window, the group's repos at any depth, deletes and repeats left out", async () => {
      await put(app, "a", digest(1), T0 - 1); // the day before the window
      await put(app, "a", digest(2), T0 + HOUR);
      await put(app, "b", digest(2), T0 + 2 * HOUR);
      await put(app, "b", digest(2), T0 + 3 * HOUR); // same digest: no history row
      const c = await put(nested, "c", digest(3), T0 + DAY + HOUR);
      assert.equal(await store.tags.delete(c.uid, T0 + DAY + 2 * HOUR), true); // a delete record
      await put(elsewhere, "a", digest(4), T0 + HOUR); // another organization
      await put(app, "a", digest(5), T0 + 3 * DAY); // at the window's end (exclusive)

      const days = await store.insights.pushesPerDay(org, T0, T0 + 3 * DAY);
      assert.deepEqual(days, [
        { epochDay: T0 / DAY, count: 2 },
        { epochDay: T0 / DAY + 1, count: 1 },
      ]);
      assert.deepEqual(await store.insights.pushesPerDay(folder, T0, T0 + 3 * DAY), [
        { epochDay: T0 / DAY + 1, count: 1 },
      ]);
      assert.deepEqual(await store.insights.pushesPerDay(org, T0 + 4 * DAY, T0 + 5 * DAY), []);
    });

    it("ranks tags by their image's newest current report's matches, worst first, within the group", async () => {
      // app:a → digest(5), app:b → digest(2); nested:d → digest(6); elsewhere:a → digest(4).
      await put(nested, "d", digest(6), T0);
      await report(app, digest(5), "GRYPE", T0, ["CRITICAL", "CRITICAL", "HIGH"]);
      // The newest current report of digest(5) (another scanner) wins over GRYPE's.
      const newest = await report(app, digest(5), "TRIVY", T0 + 10, ["HIGH", "LOW", "NEGLIGIBLE"]);
      // GRYPE's first report of digest(2) is superseded by its second.
      await report(app, digest(2), "GRYPE", T0, ["CRITICAL", "CRITICAL", "CRITICAL"]);
      const second = await report(app, digest(2), "GRYPE", T0 + 5, ["MEDIUM", "MEDIUM"]);
      const nestedReport = await report(nested, digest(6), "GRYPE", T0, ["CRITICAL", "MEDIUM", "UNKNOWN"]);
      await report(elsewhere, digest(4), "GRYPE", T0, ["CRITICAL", "CRITICAL", "CRITICAL", "CRITICAL"]);
      // A report of an untagged image counts for no tag.
      await report(app, digest(1), "GRYPE", T0, ["CRITICAL"]);

      const rows = await store.insights.tagSeverityCounts(org, 10);
      assert.deepEqual(
        rows.map((r) => [r.repoUid, r.tagName, r.digest, r.reportUid, r.critical, r.high, r.medium, r.low]),
        [
          [nested.uid, "d", digest(6), nestedReport, 1, 0, 1, 0],
          [app.uid, "a", digest(5), newest, 0, 1, 0, 1],
          [app.uid, "b", digest(2), second, 0, 0, 2, 0],
        ],
      );
      assert.deepEqual(
        (await store.insights.tagSeverityCounts(org, 1)).map((r) => r.tagName),
        ["d"],
      );
      assert.deepEqual(
        (await store.insights.tagSeverityCounts(folder, 10)).map((r) => r.tagName),
        ["d"],
      );
    });
  });
}
