import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { ListWindow } from "../../../src/core/list.js";
import { newChildUid } from "../../../src/core/uidp.js";
import type { EolCycleRow } from "../../../src/storage/eol-store.js";
import type { RepoRow } from "../../../src/storage/registry-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { firstPage, groupRow, repoRow, T0 } from "./fixtures.js";

const digest = `sha256:${"a".repeat(64)}`;
const DAY = 86_400_000;

function cycle(product: string, name: string, more: Partial<EolCycleRow> = {}): EolCycleRow {
  return {
    product,
    cycle: name,
    codename: "",
    eolUndated: false,
    lts: false,
    latestVersion: `${name}.1`,
    ...more,
  };
}

/** EolStore: cycles and rules (put outcomes, every field both ways), rule coverage and the rule-matched tag list. */
export function eolCases(db: TestDatabase): void {
  describe("eol", () => {
    let store: Store;
    let org: string;
    let folder: string;
    let otherOrg: string;
    let python: RepoRow;
    let nested: RepoRow;
    let elsewhere: RepoRow;
    const tags: Record<string, string> = {};
    const putTag = async (repo: RepoRow, name: string) => {
      const row = await store.tags.put({
        repoUid: repo.uid,
        name,
        digest,
        deprecated: false,
        newUid: newChildUid(repo.uid),
        now: T0,
      });
      tags[`${repo.uid}:${name}`] = row.uid;
      return row.uid;
    };
    const names = async (window: ListWindow = firstPage(), filter = {}) =>
      (await store.eol.listTags(filter, window)).rows.map((t) => t.name).sort();

    before(async () => {
      store = await db.openFresh();
      const o = groupRow("", "eol-org");
      const f = groupRow(o.uid, "team");
      const other = groupRow("", "eol-other");
      for (const g of [o, f, other]) await store.groups.insert(g);
      org = o.uid;
      folder = f.uid;
      otherOrg = other.uid;
      python = repoRow(org, "python");
      nested = repoRow(folder, "python");
      elsewhere = repoRow(otherOrg, "python");
      for (const r of [python, nested, elsewhere]) await store.repos.insert(r);
      for (const name of [
        "3.10",
        "3.10.4-slim",
        "3.1",
        "Latest",
        "latest",
        "3.12-20250101",
        "3.12-r3",
        "3.12-r3x",
      ]) {
        await putTag(python, name);
      }
      await putTag(nested, "3.10");
      await putTag(elsewhere, "3.10");
    });

    it("stores a cycle with every field, reports created, unchanged, updated, and keeps absent dates absent", async () => {
      const full = cycle("python", "3.10", {
        codename: "x",
        releaseDate: T0,
        eolDate: T0 + 10 * DAY,
        eolUndated: false,
        lts: true,
        ltsFrom: T0 + DAY,
        latestReleaseDate: T0 + 2 * DAY,
        supportEndDate: T0 + 3 * DAY,
        extendedSupportEndDate: T0 + 4 * DAY,
      });
      const bare = cycle("python", "2.7", { eolUndated: true, latestVersion: "" });
      assert.equal(await store.eol.putCycle(full), "created");
      assert.equal(await store.eol.putCycle(bare), "created");
      assert.equal(await store.eol.putCycle(full), "unchanged");
      assert.equal(await store.eol.putCycle({ ...full, eolDate: T0 + 11 * DAY }), "updated");
      assert.equal(await store.eol.putCycle({ ...full, eolDate: undefined }), "updated");
      assert.equal(await store.eol.putCycle(full), "updated");
      const read = (await store.eol.cycles(["python", "nodejs"])).sort((a, b) =>
        a.cycle.localeCompare(b.cycle),
      );
      assert.deepEqual(read, [bare, full]);
      assert.deepEqual(await store.eol.cycles([]), []);
      assert.deepEqual(await store.eol.cycles(["nodejs"]), []);
    });

    it("stores rules: created, unchanged, updated to another product (create time kept)", async () => {
      const rule = { orgUid: org, repoName: "python", tagGlob: "3.1*", product: "python", createTime: T0 };
      assert.equal(await store.eol.putRule(rule), "created");
      assert.equal(await store.eol.putRule({ ...rule, createTime: T0 + 5 }), "unchanged");
      assert.equal(await store.eol.putRule({ ...rule, product: "cpython", createTime: T0 + 5 }), "updated");
      assert.deepEqual(await store.eol.rulesOf(org), [{ ...rule, product: "cpython" }]);
      assert.equal(await store.eol.putRule(rule), "updated");
      assert.deepEqual(await store.eol.rulesOf(otherOrg), []);
    });

    it("a rule covers repos of its name anywhere beneath its group, never in another organization", async () => {
      const covered = await store.eol.rulesForRepos([python.uid, nested.uid, elsewhere.uid]);
      assert.deepEqual(covered.map((r) => r.repoUid).sort(), [python.uid, nested.uid].sort());
      assert.deepEqual(await store.eol.rulesForRepos([]), []);
    });

    it("lists the tags a rule's glob matches, case-sensitively, with _ literal", async () => {
      assert.deepEqual(await names(), [
        "3.1",
        "3.10",
        "3.10",
        "3.10.4-slim",
        "3.12-20250101",
        "3.12-r3",
        "3.12-r3x",
      ]);
      await store.eol.putRule({
        orgUid: org,
        repoName: "python",
        tagGlob: "latest",
        product: "python",
        createTime: T0,
      });
      assert.ok((await names()).includes("latest"));
      assert.ok(!(await names()).includes("Latest"), "globs are case-sensitive on both engines");
      await putTag(python, "v1_2");
      await putTag(python, "v1x2");
      await store.eol.putRule({
        orgUid: org,
        repoName: "python",
        tagGlob: "v1_2",
        product: "python",
        createTime: T0,
      });
      const listed = await names();
      assert.ok(
        listed.includes("v1_2") && !listed.includes("v1x2"),
        "_ is a literal character, not a LIKE wildcard",
      );
    });

    it("filters by name, uidp, scopes, and leaves out date-stamped and epoch tags on request", async () => {
      assert.deepEqual(await names(firstPage(), { name: "3.10" }), ["3.10", "3.10"]);
      assert.deepEqual(await names(firstPage(), { uidp: { childrenOf: nested.uid } }), ["3.10"]);
      assert.deepEqual(await names(firstPage(), { within: { all: false, uids: [otherOrg] } }), []);
      assert.deepEqual(await names(firstPage(), { within: { all: false, uids: [folder] } }), ["3.10"]);
      const noDates = await names(firstPage(), { excludeDates: true });
      assert.ok(!noDates.includes("3.12-20250101") && noDates.includes("3.12-r3"));
      const noEpochs = await names(firstPage(), { excludeEpochs: true });
      assert.ok(!noEpochs.includes("3.12-r3"), "-r<digits> is an epoch");
      assert.ok(noEpochs.includes("3.12-r3x") && noEpochs.includes("3.12-20250101"));
    });

    it("pages by uid with exact totals", async () => {
      const all = (await store.eol.listTags({}, firstPage())).rows.map((t) => t.uid);
      const first = await store.eol.listTags({}, firstPage(3));
      assert.equal(first.total, BigInt(all.length));
      // A store window holds limit + 1 rows (the extra one tells the kit there is a next page).
      assert.deepEqual(
        first.rows.map((t) => t.uid),
        all.slice(0, 4),
      );
      const last = first.rows[2];
      assert.ok(last);
      const second = await store.eol.listTags(
        {},
        { ...firstPage(100), after: { value: last.uid, uid: last.uid } },
      );
      assert.deepEqual(
        second.rows.map((t) => t.uid),
        all.slice(3),
      );
      assert.equal(second.total, BigInt(all.length));
    });
  });
}
