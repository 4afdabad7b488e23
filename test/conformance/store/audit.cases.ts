import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { AuditRow } from "../../../src/storage/audit-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { T0 } from "./fixtures.js";

const ORG_A = "a".repeat(40);
const ORG_B = "b".repeat(40);
/** An org whose uid starts like A's (a prefix must not count as a descendant). */
const ORG_A2 = `${"a".repeat(39)}b`;
const REPO_A = `${ORG_A}/${"1".repeat(16)}`;

function row(n: number, more: Partial<AuditRow> = {}): AuditRow {
  return {
    uid: n.toString(16).padStart(32, "0"),
    time: T0 + n * 1000,
    groupUid: ORG_A,
    actor: "alice",
    action: "platform.registry.v2.ReposService/CreateRepo",
    resource: `r${n}`,
    resultCode: "OK",
    resultReason: "",
    requestId: `q${n}`,
    sourceAddress: "10.0.0.1",
    userAgent: "ua",
    ...more,
  };
}

/** The audit log's store: append, newest-first lists with filters and scopes, pages, prune. */
export function auditCases(db: TestDatabase): void {
  describe("audit records", () => {
    let store: Store;
    const uids = async (filter: Parameters<Store["audit"]["list"]>[0]) =>
      (await store.audit.list(filter, { limit: 100 })).map((r) => r.row.uid);
    before(async () => {
      store = await db.openFresh();
      await store.audit.append([
        row(1),
        row(2, { groupUid: REPO_A, action: "registry.push", resource: "acme/app:v1" }),
        row(3, { groupUid: ORG_B, actor: "bob", resultCode: "DENIED", resultReason: "PERMISSION_DENIED" }),
        row(4, { groupUid: ORG_A2 }),
        row(5, { groupUid: "", actor: "", act: { iss: "https://idp", sub: "s", aud: "a b" } }),
        // The same millisecond as 5: ordered by insertion.
        row(6, { time: T0 + 5000, resultCode: "FAILED", resultReason: "RESOURCE_NOT_EMPTY" }),
      ]);
    });

    it("round-trips every field, newest first, the same millisecond by insertion", async () => {
      const rows = await store.audit.list({}, { limit: 100 });
      assert.deepEqual(
        rows.map((r) => r.row.uid),
        [6, 5, 4, 3, 2, 1].map((n) => row(n).uid),
      );
      assert.deepEqual(
        rows[1]?.row,
        row(5, { groupUid: "", actor: "", act: { iss: "https://idp", sub: "s", aud: "a b" } }),
      );
      assert.equal(rows[0]?.row.act, undefined);
    });

    it("filters by group subtree (not by uid prefix), scopes, actor, action, resource, result and time", async () => {
      const ids = (...ns: number[]) => ns.map((n) => row(n).uid);
      assert.deepEqual(await uids({ descendantsOf: ORG_A }), ids(6, 2, 1));
      assert.deepEqual(await uids({ within: { all: false, uids: [ORG_B, REPO_A] } }), ids(3, 2));
      assert.deepEqual(await uids({ within: { all: false, uids: [] } }), []);
      assert.deepEqual(await uids({ within: { all: true } }), ids(6, 5, 4, 3, 2, 1));
      assert.deepEqual(await uids({ actor: "bob" }), ids(3));
      assert.deepEqual(await uids({ action: "registry.push" }), ids(2));
      assert.deepEqual(await uids({ resource: "acme/app:v1" }), ids(2));
      assert.deepEqual(await uids({ resultCode: "FAILED" }), ids(6));
      assert.deepEqual(await uids({ start: T0 + 3000, end: T0 + 5000 }), ids(4, 3));
    });

    it("pages after a (time, seq) cursor without gaps or repeats", async () => {
      const first = await store.audit.list({}, { limit: 2 });
      const last = first.at(-1);
      assert.ok(last);
      const second = await store.audit.list({}, { after: { time: last.row.time, seq: last.seq }, limit: 10 });
      assert.deepEqual(
        [...first, ...second].map((r) => r.row.uid),
        [6, 5, 4, 3, 2, 1].map((n) => row(n).uid),
      );
    });

    it("prunes the oldest first, in batches, only before the cutoff", async () => {
      assert.equal(await store.audit.pruneBefore(T0 + 4500, 2), 2);
      assert.equal(await store.audit.pruneBefore(T0 + 4500, 2), 2);
      assert.equal(await store.audit.pruneBefore(T0 + 4500, 2), 0);
      assert.deepEqual(
        await uids({}),
        [6, 5].map((n) => row(n).uid),
      );
    });
  });
}
