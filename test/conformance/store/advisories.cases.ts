import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { before, describe, it } from "node:test";
import { parseSourceFile } from "../../../src/advisories/parse-source-file.js";
import type { ListWindow } from "../../../src/core/list.js";
import type { AdvisoryFilter, AdvisoryRow, VulnMetadataRow } from "../../../src/storage/advisory-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";

const FIXTURES = new URL("../../fixtures/advisories/", import.meta.url);

/** Every advisory and metadata record of the OSV and YAML fixtures, parsed as the importer does. */
function fixtureRows(): { advisories: AdvisoryRow[]; metadata: VulnMetadataRow[] } {
  const advisories: AdvisoryRow[] = [];
  const metadata: VulnMetadataRow[] = [];
  for (const dir of ["osv", "yaml", "vulnmeta"]) {
    for (const name of readdirSync(new URL(`${dir}/`, FIXTURES)).sort()) {
      if (name === "all.json") continue;
      const text = readFileSync(new URL(`${dir}/${name}`, FIXTURES), "utf8");
      const kind = dir === "vulnmeta" ? "vulnmeta" : "advisories";
      const parsed = parseSourceFile({ name, text }, { kind, author: "importer@wharf" });
      assert.ok(parsed.ok && parsed.value.rejected.length === 0, `${dir}/${name} parses cleanly`);
      advisories.push(...parsed.value.advisories);
      metadata.push(...parsed.value.metadata);
    }
  }
  return { advisories, metadata };
}

const FIRST_PAGE: ListWindow = { order: { field: "uid", desc: false }, limit: 200, skip: 0 };

/** AdvisoryStore: idempotent upserts, every list filter, paging, the feed grouping, metadata. */
export function advisoryCases(db: TestDatabase): void {
  describe("advisories", () => {
    let store: Store;
    const { advisories, metadata } = fixtureRows();
    const byName = (artifact: string, id?: string) => {
      const row = advisories.find(
        (a) => a.artifactName === artifact && (id === undefined || a.advisoryId === id),
      );
      assert.ok(row, `fixture advisory ${artifact} ${id ?? ""}`);
      return row;
    };
    const names = async (filter: AdvisoryFilter) =>
      (await store.advisories.list(filter, FIRST_PAGE)).rows
        .map((r) => `${r.artifactName}:${r.advisoryId}`)
        .sort();

    before(async () => {
      store = await db.openFresh();
      for (const row of advisories) assert.equal(await store.advisories.upsert(row), "created");
      for (const row of metadata) assert.equal(await store.advisories.upsertMetadata(row), "created");
    });

    it("get returns the row as upserted (aliases sorted, events in order); re-upserts are unchanged", async () => {
      const sample = byName("sample", "CGA-4c5f-6g7h-8j9m");
      assert.deepEqual(await store.advisories.get(sample.uid), {
        ...sample,
        aliases: [...sample.aliases].sort(),
      });
      assert.equal(await store.advisories.get("f".repeat(40)), undefined);
      for (const row of advisories) assert.equal(await store.advisories.upsert(row), "unchanged");
      const changed = {
        ...sample,
        aliases: [...sample.aliases, "CVE-2099-0001"],
        updateTime: sample.updateTime + 1,
      };
      assert.equal(await store.advisories.upsert(changed), "updated");
      assert.deepEqual((await store.advisories.get(sample.uid))?.aliases, [...changed.aliases].sort());
      assert.equal(await store.advisories.upsert(sample), "updated", "back to the fixture");
    });

    it("a failing transaction leaves no advisory behind", async () => {
      const row = { ...byName("curlish", "CGA-6g7h-8j9m-2p3q"), uid: "e".repeat(40), events: [] };
      await assert.rejects(
        store.transaction(async (tx) => {
          await tx.advisories.upsert(row);
          throw new Error("abort the file");
        }),
        /abort the file/,
      );
      assert.equal(await store.advisories.get(row.uid), undefined);
    });

    it("every filter selects what it names", async () => {
      const all = await names({});
      assert.equal(
        all.length,
        advisories.filter((a) => a.deleteTime === undefined).length,
        "withdrawn hidden",
      );
      assert.equal((await names({ showDeleted: true })).length, advisories.length);
      assert.deepEqual(await names({ advisoryIds: ["CGA-2f3q-4c5v-8w9x"] }), [
        "libexample-dev:CGA-2f3q-4c5v-8w9x",
        "libexample:CGA-2f3q-4c5v-8w9x",
      ]);
      assert.deepEqual(await names({ legacyAdvisoryIds: ["PYSEC-2025-11"] }), [
        `tarsafe-lite:${byName("tarsafe-lite").advisoryId}`,
      ]);
      assert.deepEqual(await names({ artifactNames: ["curlish"] }), [
        "curlish:CGA-6g7h-8j9m-2p3q",
        "curlish:CGA-7h8j-9m2p-3q4r",
        "curlish:CGA-8j9m-2p3q-4r5v",
      ]);
      assert.deepEqual(await names({ origin: "libexample", artifactNames: ["curlish"] }), [
        "libexample-dev:CGA-2f3q-4c5v-8w9x",
        "libexample:CGA-2f3q-4c5v-8w9x",
      ]);
      assert.equal((await names({ artifactTypes: ["library"] })).length, 5);
      assert.deepEqual(await names({ artifactTypes: ["os-package"] }), [
        `zlibber:${byName("zlibber").advisoryId}`,
      ]);
      assert.deepEqual(await names({ artifactArchitectures: ["aarch64"] }), []);
      assert.deepEqual(await names({ componentNames: ["golang.org/x/net"] }), ["sample:CGA-4c5f-6g7h-8j9m"]);
      assert.deepEqual(await names({ componentTypes: ["go-module"] }), [
        `example.org/codec:${byName("example.org/codec").advisoryId}`,
        "sample:CGA-4c5f-6g7h-8j9m",
      ]);
      assert.deepEqual(await names({ componentLocations: ["/lib/apk/db/installed"] }), [
        "curlish:CGA-6g7h-8j9m-2p3q",
      ]);
      assert.deepEqual(await names({ aliases: ["CVE-2025-10001", "CVE-2025-30003"] }), [
        "curlish:CGA-8j9m-2p3q-4r5v",
        "libexample-dev:CGA-2f3q-4c5v-8w9x",
        "libexample:CGA-2f3q-4c5v-8w9x",
      ]);
      assert.deepEqual(await names({ eventTypes: ["pending-upstream-fix"] }), ["sample:CGA-4c5f-6g7h-8j9m"]);
      assert.equal((await names({ eventReviewStates: ["approved"] })).length, all.length);
      assert.deepEqual(await names({ eventReviewStates: ["pending"] }), []);
      assert.equal((await names({ eventAuthors: ["importer@wharf"] })).length, all.length);
      assert.deepEqual(await names({ excludeEventAuthors: ["importer@wharf"] }), []);
      assert.deepEqual(await names({ eventReviewers: ["someone"] }), []);
      const eol = advisories.find((a) => a.legacyAdvisoryId === "CVE-2025-20003");
      assert.deepEqual(await names({ latestEventType: "fix-not-planned" }), [`sample:${eol?.advisoryId}`]);
      assert.deepEqual(await names({ latestEventType: "false-positive-determination" }), [
        "curlish:CGA-7h8j-9m2p-3q4r",
        "sample:CGA-5f6g-7h8j-9m2p",
        "toolbox:CGA-3g4h-5j6m-7p8q",
      ]);
      assert.deepEqual(await names({ query: "X/NET" }), ["sample:CGA-4c5f-6g7h-8j9m"], "component, any case");
      assert.deepEqual(await names({ query: "cve-2025-3000" }), [
        "curlish:CGA-6g7h-8j9m-2p3q",
        "curlish:CGA-7h8j-9m2p-3q4r",
        "curlish:CGA-8j9m-2p3q-4r5v",
      ]);
      assert.deepEqual(await names({ query: "%" }), [], "LIKE wildcards are literal");
      assert.deepEqual(await names({ uidp: { ids: [byName("toolbox").uid] } }), [
        "toolbox:CGA-3g4h-5j6m-7p8q",
      ]);
      assert.deepEqual(await names({ uidp: { childrenOf: byName("toolbox").uid } }), []);
      assert.deepEqual(
        await names({ artifactNames: ["curlish"], latestEventType: "fixed", eventTypes: ["detection"] }),
        ["curlish:CGA-6g7h-8j9m-2p3q"],
        "filters combine with AND",
      );
    });

    it("pages by uid and by update_time with totals", async () => {
      const seen: string[] = [];
      let after: ListWindow["after"];
      for (;;) {
        const page = await store.advisories.list(
          {},
          { ...FIRST_PAGE, limit: 4, ...(after ? { after } : {}) },
        );
        assert.equal(Number(page.total), advisories.length - 1);
        const rows = page.rows.slice(0, 4);
        seen.push(...rows.map((r) => r.uid));
        if (page.rows.length <= 4) break;
        const last = rows.at(-1);
        after = { value: last?.uid ?? "", uid: last?.uid ?? "" };
      }
      assert.deepEqual(seen, [...seen].sort());
      assert.equal(new Set(seen).size, advisories.length - 1);
      const newest = await store.advisories.list(
        {},
        { order: { field: "update_time", desc: true }, limit: 1, skip: 0 },
      );
      assert.equal(newest.rows[0]?.artifactName, "example.org/codec");
    });

    it("byOrigin groups live advisories by origin, optionally by alias", async () => {
      const rows = await store.advisories.byOrigin("libexample", []);
      assert.deepEqual(
        rows.map((r) => r.artifactName),
        ["libexample", "libexample-dev"],
      );
      assert.deepEqual(
        rows[0]?.events.map((e) => e.type),
        ["fixed"],
      );
      const bycve = await store.advisories.byOrigin("", ["CVE-2025-30002", "CVE-2025-10006"]);
      assert.deepEqual(
        bycve.map((r) => r.advisoryId),
        ["CGA-7h8j-9m2p-3q4r"],
        "the withdrawn one is left out",
      );
    });

    it("metadata: upsert is idempotent; list by ids, ordered by id, pages with skip and desc", async () => {
      for (const row of metadata) assert.equal(await store.advisories.upsertMetadata(row), "unchanged");
      const cve = await store.advisories.getMetadata("CVE-2025-10003");
      assert.deepEqual(
        cve,
        metadata.find((m) => m.id === "CVE-2025-10003"),
      );
      const all = await store.advisories.listMetadata([], { desc: false, limit: 50, skip: 0 });
      assert.deepEqual(
        all.rows.map((r) => r.id),
        ["CVE-2025-10003", "GHSA-4h5j-6m7p-8q9r", "GHSA-5j6m-7p8q-9r2v", "GHSA-9r2v-3w4x-hjmp"],
      );
      assert.equal(all.total, 4n);
      const some = await store.advisories.listMetadata(["GHSA-9r2v-3w4x-hjmp", "CVE-2025-10003", "NOPE-1"], {
        desc: true,
        limit: 1,
        skip: 0,
      });
      assert.deepEqual(
        some.rows.map((r) => r.id),
        ["GHSA-9r2v-3w4x-hjmp", "CVE-2025-10003"],
        "limit + 1 rows",
      );
      assert.equal(some.total, 2n);
      const next = await store.advisories.listMetadata([], {
        afterId: "CVE-2025-10003",
        desc: false,
        limit: 5,
        skip: 1,
      });
      assert.deepEqual(
        next.rows.map((r) => r.id),
        ["GHSA-5j6m-7p8q-9r2v", "GHSA-9r2v-3w4x-hjmp"],
      );
      const changed = { ...(cve as VulnMetadataRow), summary: "new words", references: [] };
      assert.equal(await store.advisories.upsertMetadata(changed), "updated");
      assert.deepEqual(await store.advisories.getMetadata("CVE-2025-10003"), changed);
    });
  });
}
