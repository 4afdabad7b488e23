import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import type { RepoRow } from "../../../src/storage/registry-store.js";
import type { Store } from "../../../src/storage/store.js";
import { imageKey, type VexDocumentRow, type VexStatementRecord } from "../../../src/storage/vex-store.js";
import type { TestDatabase } from "../../support/databases.js";
import { assertDomainError, childUid, groupRow, repoRow, T0 } from "./fixtures.js";

const digest = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;

function statement(vulnerability: string, extra: Partial<VexStatementRecord> = {}): VexStatementRecord {
  return {
    vulnerability,
    aliases: ["GHSA-xxxx-yyyy-zzzz"],
    status: "not_affected",
    justification: "vulnerable_code_not_in_execute_path",
    impactStatement: "the parser is never called – ünïcode",
    actionStatement: "",
    effectiveTime: T0,
    applies: true,
    subcomponents: ["pkg:apk/wolfi/libexample@1.2.2"],
    ...extra,
  };
}

/** OpenVEX documents: stored with their statements in order; applicable statements per image. */
export function vexCases(db: TestDatabase): void {
  describe("VEX documents", () => {
    let store: Store;
    let repo: RepoRow;
    let other: RepoRow;
    let n = 0;
    const doc = (r: RepoRow, extra: Partial<VexDocumentRow> = {}): VexDocumentRow => ({
      uid: childUid(r.uid, (++n).toString(16).padStart(16, "0")),
      repoUid: r.uid,
      digest: digest(1),
      documentId: `https://openvex.dev/docs/example/vex-${n}`,
      author: "Security Team <security@example.test>",
      issueTime: T0 - 5000,
      source: "upload",
      referrer: "",
      contentDigest: digest(9000 + n),
      statementCount: 0,
      appliedCount: 0,
      createTime: T0 + n,
      ...extra,
    });

    before(async () => {
      store = await db.openFresh();
      const org = groupRow("", "vex-org");
      const org2 = groupRow("", "vex-org-2");
      await store.groups.insert(org);
      await store.groups.insert(org2);
      repo = repoRow(org.uid, "app");
      other = repoRow(org2.uid, "app");
      await store.repos.insert(repo);
      await store.repos.insert(other);
    });

    it("stores a document with its statements and counts, and lists documents oldest first", async () => {
      const first = doc(repo, { source: "referrer", referrer: digest(77) });
      const stored = await store.vex.insert(first, [
        statement("CVE-1"),
        statement("CVE-2", { applies: false, subcomponents: [] }),
        statement("CVE-3", { status: "affected", justification: "", actionStatement: "upgrade" }),
      ]);
      assert.deepEqual(stored, { ...first, statementCount: 3, appliedCount: 2 });
      const second = await store.vex.insert(doc(repo), [statement("CVE-4")]);
      assert.deepEqual(
        (await store.vex.documents(repo.uid, digest(1))).map((d) => [
          d.uid,
          d.statementCount,
          d.appliedCount,
        ]),
        [
          [first.uid, 3, 2],
          [second.uid, 1, 1],
        ],
      );
      assert.deepEqual(await store.vex.documents(other.uid, digest(1)), []);
    });

    it("answers only applicable statements per image, in document order, keeping images and repos apart", async () => {
      await store.vex.insert(doc(other), [statement("CVE-other")]);
      await store.vex.insert(doc(repo, { digest: digest(2) }), [statement("CVE-img2")]);
      const got = await store.vex.applicable([
        { repoUid: repo.uid, digest: digest(1) },
        { repoUid: repo.uid, digest: digest(3) },
      ]);
      assert.deepEqual([...got.keys()], [imageKey(repo.uid, digest(1))]);
      const rows = got.get(imageKey(repo.uid, digest(1))) ?? [];
      assert.deepEqual(
        rows.map((r) => [r.vulnerability, r.status, r.ordinal]),
        [
          ["CVE-1", "not_affected", 0],
          ["CVE-3", "affected", 2],
          ["CVE-4", "not_affected", 0],
        ],
      );
      const first = rows[0];
      assert.deepEqual(first && { ...first, documentUid: "", createTime: 0 }, {
        ...statement("CVE-1"),
        documentUid: "",
        ordinal: 0,
        repoUid: repo.uid,
        digest: digest(1),
        createTime: 0,
      });
      assert.deepEqual(await store.vex.applicable([]), new Map());
    });

    it("refuses a document of a missing repo", async () => {
      const ghost = { ...repo, uid: childUid(repo.groupUid, "ffffffffffffffff") };
      await assertDomainError(store.vex.insert(doc(ghost), [statement("CVE-1")]), Code.NotFound);
    });

    it("drops documents and statements with their repo", async () => {
      const gone = repoRow(repo.groupUid, "gone");
      await store.repos.insert(gone);
      await store.vex.insert(doc(gone), [statement("CVE-1")]);
      await store.repos.delete(gone.uid);
      assert.deepEqual(await store.vex.documents(gone.uid, digest(1)), []);
      assert.deepEqual(await store.vex.applicable([{ repoUid: gone.uid, digest: digest(1) }]), new Map());
    });
  });
}
