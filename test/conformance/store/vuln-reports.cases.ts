import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import type { RepoRow } from "../../../src/storage/registry-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { VulnMatchRecord, VulnReportRow } from "../../../src/storage/vuln-report-store.js";
import type { TestDatabase } from "../../support/databases.js";
import { assertDomainError, childUid, groupRow, repoRow, T0 } from "./fixtures.js";

const digest = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;

function match(id: string, extra: Partial<VulnMatchRecord> = {}): VulnMatchRecord {
  return {
    vulnerabilityId: id,
    aliases: ["CVE-2026-0001"],
    severity: "HIGH",
    cvss: [
      { score: 7.5, version: "3.1", vector: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N", source: "nvd" },
    ],
    description: "über-long description – with unicode",
    relatedUrls: ["https://example.test/a"],
    fixVersions: ["1.2.3"],
    fixState: "FIXED",
    packageName: "libexample",
    packageVersion: "1.2.2",
    packageType: "apk",
    purl: "pkg:apk/wolfi/libexample@1.2.2",
    locations: ["/lib/apk/db/installed"],
    ...extra,
  };
}

/** Vulnerability reports: current report per (repo, digest, scanner) with history, matches, filters. */
export function vulnReportCases(db: TestDatabase): void {
  describe("vulnerability reports", () => {
    let store: Store;
    let repo: RepoRow;
    let other: RepoRow;
    let n = 0;
    const report = (
      r: RepoRow,
      extra: Partial<Omit<VulnReportRow, "current">> = {},
    ): Omit<VulnReportRow, "current"> => ({
      uid: childUid(r.uid, (++n).toString(16).padStart(16, "0")),
      repoUid: r.uid,
      digest: digest(1),
      scanner: "GRYPE",
      scannerVersion: "0.87.0",
      dbBuildTime: T0 - 1000,
      envelope: "bare",
      rawDigest: digest(1000 + n),
      rawSize: 4321,
      matchCount: 0,
      createTime: T0 + n,
      ...extra,
    });

    before(async () => {
      store = await db.openFresh();
      const org = groupRow("", "vuln-org");
      const org2 = groupRow("", "vuln-org-2");
      await store.groups.insert(org);
      await store.groups.insert(org2);
      repo = repoRow(org.uid, "app");
      other = repoRow(org2.uid, "app");
      await store.repos.insert(repo);
      await store.repos.insert(other);
    });

    it("stores a report with its matches in order, and records the raw blob row", async () => {
      const row = report(repo);
      const matches = [
        match("CVE-1"),
        match("GHSA-x", { cvss: [], aliases: [], locations: [] }),
        match("CVE-3"),
      ];
      const stored = await store.vulnReports.insert(row, matches);
      assert.deepEqual(stored, { ...row, matchCount: 3, current: true });
      assert.deepEqual(await store.vulnReports.get(row.uid), stored);
      const got = await store.vulnReports.matches([row.uid, "missing"]);
      assert.deepEqual(got.get(row.uid), matches);
      assert.deepEqual(got.get("missing"), []);
      assert.deepEqual(await store.blobs.get(row.rawDigest), {
        digest: row.rawDigest,
        size: 4321,
        createTime: row.createTime,
      });
    });

    it("re-uploading for the same digest and scanner replaces the current report and keeps the old one", async () => {
      const first = await store.vulnReports.insert(report(repo, { digest: digest(2) }), [match("CVE-old")]);
      const second = await store.vulnReports.insert(report(repo, { digest: digest(2) }), [match("CVE-new")]);
      const trivy = await store.vulnReports.insert(report(repo, { digest: digest(2), scanner: "TRIVY" }), []);
      assert.equal((await store.vulnReports.get(first.uid))?.current, false);
      assert.equal((await store.vulnReports.current(repo.uid, digest(2), "GRYPE"))?.uid, second.uid);
      assert.equal(
        (await store.vulnReports.current(repo.uid, digest(2)))?.uid,
        trivy.uid,
        "newest of any scanner",
      );
      const history = await store.vulnReports.list(
        { repoUid: repo.uid, digests: [digest(2)], scanner: "GRYPE" },
        10,
      );
      assert.deepEqual(
        history.map((r) => [r.uid, r.current]),
        [
          [second.uid, true],
          [first.uid, false],
        ],
      );
      assert.deepEqual(
        (await store.vulnReports.matches([first.uid])).get(first.uid)?.[0]?.vulnerabilityId,
        "CVE-old",
      );
      const currentOnly = await store.vulnReports.list({ digests: [digest(2)], currentOnly: true }, 10);
      assert.deepEqual(currentOnly.map((r) => r.uid).sort(), [second.uid, trivy.uid].sort());
    });

    it("filters by scope, digest, scanner and creation time; finds one report for the raw bytes", async () => {
      const mine = await store.vulnReports.insert(report(repo, { digest: digest(3) }), []);
      const theirs = await store.vulnReports.insert(report(other, { digest: digest(3) }), []);
      const inMine = await store.vulnReports.list(
        { digests: [digest(3)], within: { all: false, uids: [repo.groupUid] } },
        10,
      );
      assert.deepEqual(
        inMine.map((r) => r.uid),
        [mine.uid],
      );
      assert.deepEqual(
        await store.vulnReports.list({ digests: [digest(3)], within: { all: false, uids: [] } }, 10),
        [],
      );
      assert.equal((await store.vulnReports.list({ digests: [digest(3)] }, 10)).length, 2);
      assert.equal((await store.vulnReports.list({ digests: [digest(3)], scanner: "TRIVY" }, 10)).length, 0);
      assert.deepEqual(
        (await store.vulnReports.list({ digests: [digest(3)], createdSince: theirs.createTime }, 10)).map(
          (r) => r.uid,
        ),
        [theirs.uid],
      );
      assert.equal((await store.vulnReports.list({ digests: [] }, 10)).length, 0);
      const found = await store.vulnReports.find({
        digest: digest(3),
        scanner: "GRYPE",
        createTime: mine.createTime,
        within: { all: false, uids: [repo.groupUid] },
      });
      assert.equal(found?.uid, mine.uid);
      assert.equal(
        await store.vulnReports.find({
          digest: digest(3),
          scanner: "GRYPE",
          createTime: theirs.createTime,
          within: { all: false, uids: [repo.groupUid] },
        }),
        undefined,
        "another organization's report is not found",
      );
    });

    it("refuses a report of a missing repo with NOT_FOUND and stores nothing", async () => {
      const ghost = repoRow(repo.groupUid, "ghost");
      const row = report(ghost, { digest: digest(4) });
      await assertDomainError(store.vulnReports.insert(row, [match("CVE-1")]), Code.NotFound);
      assert.equal(await store.vulnReports.get(row.uid), undefined);
      assert.equal(await store.blobs.get(row.rawDigest), undefined, "the blob row rolled back too");
    });

    it("keeps a report's raw blob from garbage collection while the report exists; reports go with their repo", async () => {
      const doomed = repoRow(repo.groupUid, "doomed");
      await store.repos.insert(doomed);
      const row = await store.vulnReports.insert(report(doomed, { digest: digest(5) }), [match("CVE-1")]);
      const later = row.createTime + 10_000;
      assert.deepEqual(
        (await store.garbage.orphanBlobs(later, 1000)).filter((b) => b.digest === row.rawDigest),
        [],
        "a raw report blob is no orphan",
      );
      assert.equal(await store.garbage.deleteIfOrphan(row.rawDigest, later), false);
      assert.equal(await store.repos.delete(doomed.uid), true);
      assert.equal(await store.vulnReports.get(row.uid), undefined);
      assert.deepEqual((await store.vulnReports.matches([row.uid])).get(row.uid), []);
      assert.equal(await store.garbage.deleteIfOrphan(row.rawDigest, later), true, "unreferenced now");
    });

    it("keeps exactly one current report when uploads of the same key race", async () => {
      const rows = Array.from({ length: 6 }, () => report(repo, { digest: digest(6) }));
      await Promise.all(rows.map((r) => store.vulnReports.insert(r, [match("CVE-race")])));
      const all = await store.vulnReports.list({ digests: [digest(6)] }, 10);
      assert.equal(all.length, 6);
      assert.equal(all.filter((r) => r.current).length, 1);
    });
  });
}
