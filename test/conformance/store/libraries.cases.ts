import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { ListWindow } from "../../../src/core/list.js";
import { artifactUid, versionUid } from "../../../src/libraries/library-ids.js";
import { storeLibraryVersions } from "../../../src/libraries/library-import.js";
import type { LibraryVersionRecord } from "../../../src/libraries/library-record.js";
import type {
  LibraryArtifactRow,
  LibraryVersionRow,
  PutOutcome,
} from "../../../src/storage/library-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { T0 } from "./fixtures.js";

const DAY = 86_400_000;

function record(
  ecosystem: LibraryVersionRecord["ecosystem"],
  name: string,
  version: string,
  day: number,
  more: Partial<LibraryVersionRecord> = {},
): LibraryVersionRecord {
  return {
    ecosystem,
    name,
    version,
    description: `${name} ${version}`,
    publishTime: T0 + day * DAY,
    sizeBytes: 1000n + BigInt(day),
    remediated: false,
    ...more,
  };
}

/** Imports `records` in one transaction, returning the outcome counts. */
async function importRecords(
  store: Store,
  records: LibraryVersionRecord[],
): Promise<Record<PutOutcome, number>> {
  const counts: Record<PutOutcome, number> = { created: 0, updated: 0, unchanged: 0 };
  await store.transaction((tx) =>
    storeLibraryVersions(tx, records, { count: (o) => (counts[o] += 1), advance: () => undefined }),
  );
  return counts;
}

function window(
  field: ListWindow["order"]["field"],
  desc: boolean,
  limit = 100,
  after?: ListWindow["after"],
): ListWindow {
  return { order: { field, desc }, limit, skip: 0, ...(after ? { after } : {}) };
}

/** Every row of a list, fetched `limit` at a time through keyset cursors. */
async function allPages<T extends { uid: string }>(
  fetch: (w: ListWindow) => Promise<{ rows: T[] }>,
  field: ListWindow["order"]["field"],
  desc: boolean,
  sortValue: (row: T) => string | number,
  limit = 2,
): Promise<T[]> {
  const out: T[] = [];
  let after: ListWindow["after"];
  for (;;) {
    const { rows } = await fetch(window(field, desc, limit, after));
    out.push(...rows.slice(0, limit));
    if (rows.length <= limit) return out;
    const last = rows[limit - 1] as T;
    after = { value: sortValue(last), uid: last.uid };
  }
}

const JAVA = "org.example:core";
const CATALOGUE: LibraryVersionRecord[] = [
  record("JAVA", JAVA, "3.5.0", 10),
  record("JAVA", JAVA, "3.4.1", 5),
  record("JAVA", JAVA, "3.5.0-0.cgr.2", 12, { remediated: true, description: "remediated build" }),
  record("JAVA", JAVA, "3.10.0", 8),
  record("JAVA", "org.example:util", "1.0", 1),
  record("PYTHON", "torch", "2.3.0", 20),
  record("PYTHON", "torch", "2.3.0+cu121", 21),
  record("PYTHON", "Flask-Admin", "1.6.1", 2),
  record("JAVASCRIPT", "left-pad", "1.3.0", 3),
  record("JAVASCRIPT", "left-pad", "1.3.0-cgr.1", 4, { remediated: true }),
];

/** LibraryStore and the import that aggregates artifacts from versions, on every engine. */
export function libraryCases(db: TestDatabase): void {
  describe("libraries", () => {
    let store: Store;
    before(async () => {
      store = await db.openFresh();
      assert.deepEqual(await importRecords(store, CATALOGUE), { created: 10, updated: 0, unchanged: 0 });
    });

    it("aggregates artifacts: latest in the ecosystem's order, count, first and latest publish, latest description", async () => {
      const core = (await store.libraries.getArtifact(artifactUid("JAVA", JAVA))) as LibraryArtifactRow;
      assert.deepEqual(core, {
        uid: artifactUid("JAVA", JAVA),
        ecosystem: "JAVA",
        name: JAVA,
        description: `${JAVA} 3.10.0`,
        latestVersion: "3.10.0",
        versionCount: 4,
        remediatedCount: 1,
        createTime: T0 + 5 * DAY,
        updateTime: T0 + 12 * DAY,
      });
      const pad = await store.libraries.getArtifact(artifactUid("JAVASCRIPT", "left-pad"));
      assert.equal(pad?.latestVersion, "1.3.0-cgr.1", "a remediated build follows its release");
      const torch = await store.libraries.getArtifact(artifactUid("PYTHON", "torch"));
      assert.equal(torch?.latestVersion, "2.3.0+cu121");
    });

    it("re-importing the same versions is unchanged; a changed field is updated; ranks follow new versions", async () => {
      assert.deepEqual(await importRecords(store, CATALOGUE), { created: 0, updated: 0, unchanged: 10 });
      const changed = record("JAVA", JAVA, "3.4.1", 5, { sizeBytes: 42n });
      const newer = record("JAVA", JAVA, "3.10.1", 30, { description: "newest" });
      assert.deepEqual(await importRecords(store, [changed, newer]), {
        created: 1,
        updated: 1,
        unchanged: 0,
      });
      const core = await store.libraries.getArtifact(artifactUid("JAVA", JAVA));
      assert.equal(core?.latestVersion, "3.10.1");
      assert.equal(core?.description, "newest");
      assert.equal(core?.versionCount, 5);
      assert.equal(core?.updateTime, T0 + 30 * DAY);
      const versions = await store.libraries.versionsOf(artifactUid("JAVA", JAVA));
      const byRank = [...versions].sort((a, b) => a.rank - b.rank).map((v) => v.version);
      assert.deepEqual(byRank, ["3.4.1", "3.5.0", "3.5.0-0.cgr.2", "3.10.0", "3.10.1"]);
      assert.equal(versions.find((v) => v.version === "3.4.1")?.sizeBytes, 42n);
    });

    it("lists versions newest first by rank, pages through keyset cursors, and by publish time", async () => {
      const uid = artifactUid("JAVA", JAVA);
      const byVersion = await allPages<LibraryVersionRow>(
        (w) => store.libraries.listVersions(uid, w),
        "version",
        true,
        (r) => r.rank,
      );
      assert.deepEqual(
        byVersion.map((v) => v.version),
        ["3.10.1", "3.10.0", "3.5.0-0.cgr.2", "3.5.0", "3.4.1"],
      );
      assert.equal(byVersion[0]?.uid, versionUid(uid, "3.10.1"));
      const byPublish = await allPages<LibraryVersionRow>(
        (w) => store.libraries.listVersions(uid, w),
        "create_time",
        false,
        (r) => r.publishTime,
      );
      assert.deepEqual(
        byPublish.map((v) => v.version),
        ["3.4.1", "3.10.0", "3.5.0", "3.5.0-0.cgr.2", "3.10.1"],
      );
      const slice = await store.libraries.listVersions(uid, { ...window("version", true, 2), skip: 1 });
      assert.equal(slice.total, 5n);
      assert.deepEqual(
        slice.rows.map((v) => v.version),
        ["3.10.0", "3.5.0-0.cgr.2", "3.5.0"],
      );
    });

    it("lists artifacts of the named ecosystems by name (byte order), with every filter", async () => {
      const names = async (filter: Parameters<Store["libraries"]["listArtifacts"]>[0]) =>
        (await store.libraries.listArtifacts(filter, window("name", false))).rows.map((a) => a.name);
      assert.deepEqual(await names({ ecosystems: ["JAVA", "PYTHON"] }), [
        "Flask-Admin",
        "org.example:core",
        "org.example:util",
        "torch",
      ]);
      assert.deepEqual(await names({ ecosystems: [] }), []);
      assert.deepEqual(await names({ ecosystems: ["PYTHON"], query: "FLASK" }), ["Flask-Admin"]);
      assert.deepEqual(await names({ ecosystems: ["JAVA"], query: "example:c" }), ["org.example:core"]);
      assert.deepEqual(
        await names({ ecosystems: ["JAVA"], query: "%" }),
        [],
        "LIKE wildcards match literally",
      );
      assert.deepEqual(await names({ ecosystems: ["JAVA", "JAVASCRIPT", "PYTHON"], remediated: true }), [
        "left-pad",
        "org.example:core",
      ]);
      assert.deepEqual(await names({ ecosystems: ["PYTHON"], cudaVersion: "12.1" }), ["torch"]);
      assert.deepEqual(await names({ ecosystems: ["PYTHON"], cudaVersion: "11.8" }), []);
      const paged = await allPages<LibraryArtifactRow>(
        (w) => store.libraries.listArtifacts({ ecosystems: ["JAVA", "JAVASCRIPT", "PYTHON"] }, w),
        "name",
        true,
        (r) => r.name,
      );
      assert.deepEqual(
        paged.map((a) => a.name),
        ["torch", "org.example:util", "org.example:core", "left-pad", "Flask-Admin"],
      );
      const total = await store.libraries.listArtifacts(
        { ecosystems: ["JAVA", "PYTHON"] },
        { ...window("name", false, 1), skip: 1 },
      );
      assert.equal(total.total, 4n);
    });

    it("counts artifacts per named ecosystem, zero for an empty one", async () => {
      const counts = await store.libraries.countArtifacts(["JAVA", "PYTHON", "JAVASCRIPT"]);
      assert.deepEqual(Object.fromEntries(counts), { JAVA: 2, PYTHON: 2, JAVASCRIPT: 1 });
      const fresh = await db.openFresh();
      assert.deepEqual(Object.fromEntries(await fresh.libraries.countArtifacts(["JAVA"])), { JAVA: 0 });
    });

    it("a failed import transaction leaves neither versions nor artifacts", async () => {
      const fresh = await db.openFresh();
      await assert.rejects(
        fresh.transaction(async (tx) => {
          await storeLibraryVersions(tx, [record("PYTHON", "requests", "2.31.0", 1)], {
            count: () => undefined,
            advance: () => undefined,
          });
          throw new Error("abort");
        }),
        /abort/,
      );
      assert.equal(await fresh.libraries.getArtifact(artifactUid("PYTHON", "requests")), undefined);
      assert.deepEqual(await fresh.libraries.versionsOf(artifactUid("PYTHON", "requests")), []);
    });
  });
}
