import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { before, describe, it } from "node:test";
import { systemClock } from "../../../src/core/clock.js";
import {
  type ListSpec,
  type Page,
  PageTokenCodec,
  paginate,
  type SortField,
} from "../../../src/core/list.js";
import type { RepoFilter, RepoListRow, RepoRow } from "../../../src/storage/registry-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { groupRow, repoRow, T0 } from "./fixtures.js";

const REPOS = 10_000;
const GROUPS = 20;
const FIELDS: readonly SortField[] = ["uid", "name", "create_time", "update_time"];

const spec: ListSpec<RepoListRow> = {
  allowedOrder: FIELDS,
  defaultOrder: { field: "uid", desc: false },
  sortValue: (r, field) =>
    field === "uid"
      ? r.uid
      : field === "name"
        ? r.name
        : field === "create_time"
          ? r.createTime
          : r.updateTime,
  uidOf: (r) => r.uid,
};

/** The order the store must produce: (field, uid), both in the same direction, byte order for strings. */
function expectedOrder<T extends RepoListRow>(rows: readonly T[], field: SortField, desc: boolean): T[] {
  const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);
  const sign = desc ? -1 : 1;
  return [...rows].sort(
    (a, b) => sign * (cmp(spec.sortValue(a, field), spec.sortValue(b, field)) || cmp(a.uid, b.uid)),
  );
}

/**
 * Keyset paging through 10,000 repos with ties on name (20 groups share each name), create_time
 * (~100 rows per value) and update_time (10 rows per value), for every order, via `paginate` and
 * page tokens exactly as the API does; plus skip, total counts and stability under writes.
 */
export function pagingCases(db: TestDatabase): void {
  describe("paging", () => {
    let store: Store;
    let rows: RepoRow[];
    let groups: string[];
    const codec = new PageTokenCodec(randomBytes(32), systemClock);

    const page = (filter: RepoFilter, orderBy: string, pageSize: number, pageToken = "", skip = 0) =>
      paginate({ pageSize, pageToken, orderBy, skip }, filter, spec, codec, (w) =>
        store.repos.list(filter, w),
      );

    /** Every page of a query; asserts page sizes, tokens and totalCount on the way. */
    const walk = async (filter: RepoFilter, orderBy: string, pageSize: number, total: number) => {
      const seen: RepoListRow[] = [];
      let token = "";
      do {
        const p: Page<RepoListRow> = await page(filter, orderBy, pageSize, token);
        assert.equal(p.totalCount, BigInt(total));
        if (p.nextPageToken !== "") assert.equal(p.items.length, pageSize, "only the last page is short");
        seen.push(...p.items);
        token = p.nextPageToken;
        assert.ok(seen.length <= total, "paging must end");
      } while (token !== "");
      return seen;
    };

    const assertSameSequence = (actual: RepoListRow[], expected: RepoListRow[], what: string) => {
      assert.equal(new Set(actual.map((r) => r.uid)).size, actual.length, `${what}: no row repeated`);
      assert.equal(actual.length, expected.length, `${what}: no row skipped`);
      for (let i = 0; i < expected.length; i++) {
        if (actual[i]?.uid !== expected[i]?.uid) {
          assert.fail(`${what}: position ${i} is ${actual[i]?.uid}, expected ${expected[i]?.uid}`);
        }
      }
    };

    before(async () => {
      store = await db.openFresh();
      const org = groupRow("", "paging-org");
      const subgroups = Array.from({ length: GROUPS }, (_, g) => groupRow(org.uid, `g${g}`));
      groups = subgroups.map((g) => g.uid);
      rows = Array.from({ length: REPOS }, (_, i) => {
        const k = Math.floor(i / GROUPS);
        const name = `${k % 3 === 0 ? "Repo" : "repo"}-${k}`;
        const row = repoRow(groups[i % GROUPS] ?? "", name, T0 + (i % 97) * 1000);
        return { ...row, updateTime: T0 + ((i * 7919) % 1000) };
      });
      await store.transaction(async (tx) => {
        await tx.groups.insert(org);
        for (const g of subgroups) await tx.groups.insert(g);
        for (const r of rows) await tx.repos.insert(r);
      });
    });

    for (const field of FIELDS) {
      for (const desc of [false, true]) {
        const orderBy = `${field} ${desc ? "desc" : "asc"}`;
        it(`pages by ${orderBy} without repeating or skipping rows`, async () => {
          const expected = expectedOrder(rows, field, desc);
          for (const pageSize of [200, 97]) {
            assertSameSequence(
              await walk({}, orderBy, pageSize, REPOS),
              expected,
              `${orderBy}, pages of ${pageSize}`,
            );
          }
          const group = groups[3] ?? "";
          const filter = { uidp: { descendantsOf: group } };
          const subset = expectedOrder(
            rows.filter((r) => r.groupUid === group),
            field,
            desc,
          );
          assertSameSequence(
            await walk(filter, orderBy, 7, subset.length),
            subset,
            `${orderBy} in one group`,
          );
        });
      }
    }

    it("skip drops rows after the cursor and accumulates in `skipped`", async () => {
      const expected = expectedOrder(rows, "name", false);
      const first = await page({}, "name", 50, "", 5);
      assertSameSequence(first.items, expected.slice(5, 55), "first page after skip 5");
      assert.equal(first.skipped, 5);
      assert.equal(first.totalCount, BigInt(REPOS));
      const second = await page({}, "name", 50, first.nextPageToken, 3);
      assertSameSequence(second.items, expected.slice(58, 108), "second page after skip 3");
      assert.equal(second.skipped, 8);
      assert.equal(second.totalCount, BigInt(REPOS));

      const beyond = await page({}, "name", 50, "", REPOS * 2);
      assert.deepEqual(beyond.items, []);
      assert.equal(beyond.nextPageToken, "");
      assert.equal(beyond.totalCount, BigInt(REPOS));
    });

    it("counts the filter, not the window, for small result sets", async () => {
      const filter = { name: "repo-7" };
      const all = expectedOrder(
        rows.filter((r) => r.name === "repo-7"),
        "uid",
        false,
      );
      assert.equal(all.length, GROUPS);

      const exact = await page(filter, "", GROUPS);
      assertSameSequence(exact.items, all, "a page that fits exactly");
      assert.equal(exact.nextPageToken, "");
      assert.equal(exact.totalCount, BigInt(GROUPS));

      const short = await page(filter, "", GROUPS - 1);
      assert.equal(short.items.length, GROUPS - 1);
      assert.notEqual(short.nextPageToken, "");
      assert.equal(short.totalCount, BigInt(GROUPS));
      const rest = await page(filter, "", GROUPS - 1, short.nextPageToken);
      assertSameSequence([...short.items, ...rest.items], all, "two pages");
      assert.equal(rest.totalCount, BigInt(GROUPS));

      const skipped = await page(filter, "", 50, "", 5);
      assertSameSequence(skipped.items, all.slice(5), "skip inside a small set");
      assert.equal(skipped.totalCount, BigInt(GROUPS));
      const overshot = await page(filter, "", 50, "", GROUPS + 5);
      assert.deepEqual(overshot.items, []);
      assert.equal(overshot.totalCount, BigInt(GROUPS));
      assert.equal((await page({ name: "no-such-repo" }, "", 50)).totalCount, 0n);
    });

    it("keeps going from the cursor when rows change between pages", async () => {
      const group = groups[0] ?? "";
      const filter = { uidp: { childrenOf: group } };
      const before = expectedOrder(
        rows.filter((r) => r.groupUid === group),
        "create_time",
        false,
      );
      const first = await page(filter, "create_time", 100);
      assertSameSequence(first.items, before.slice(0, 100), "first page");
      // Two new rows sorting before the cursor, and a deleted row after it.
      await store.repos.insert(repoRow(group, "inserted-early", T0 - 1));
      await store.repos.insert(repoRow(group, "inserted-early-2", T0 - 1));
      const removed = before[150];
      assert.ok(removed !== undefined);
      assert.equal(await store.repos.delete(removed.uid), true);

      const rest: RepoListRow[] = [];
      let token = first.nextPageToken;
      while (token !== "") {
        const p = await page(filter, "create_time", 100, token);
        assert.equal(p.totalCount, BigInt(before.length + 1), "total reflects the current rows");
        rest.push(...p.items);
        token = p.nextPageToken;
      }
      assertSameSequence(
        rest,
        before.slice(100).filter((r) => r.uid !== removed.uid),
        "later pages",
      );
    });

    it("totals see other handles' writes: at once without the count cache, after its TTL with it", async () => {
      const options = await db.options();
      const writer = await db.open(options);
      const exact = await db.open({ ...options, listCountTtlMs: 0 });
      const cached = await db.open({ ...options, listCountTtlMs: 150 });
      const group = groups[5] ?? "";
      const filter = { uidp: { childrenOf: group } };
      const totalOf = async (s: Store) => {
        // A cursor page always needs the count (a first page may prove it from its rows).
        const window = {
          order: { field: "uid" as const, desc: false },
          limit: 1,
          skip: 0,
          after: { value: "", uid: "" },
        };
        return (await s.repos.list(filter, window)).total;
      };
      const start = await totalOf(cached);
      assert.equal(await totalOf(exact), start);
      await writer.repos.insert(repoRow(group, "from-another-handle"));
      assert.equal(await totalOf(exact), start + 1n);
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(await totalOf(cached), start + 1n);
    });
  });
}
