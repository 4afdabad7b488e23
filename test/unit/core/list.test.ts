import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import { DomainError } from "../../../src/core/errors.js";
import {
  type ListSlice,
  type ListSpec,
  type ListWindow,
  PAGE_TOKEN_TTL_MS,
  PageTokenCodec,
  paginate,
  parseOrderBy,
} from "../../../src/core/list.js";

interface Row {
  uid: string;
  name: string;
}
const spec: ListSpec<Row> = {
  allowedOrder: ["uid", "name"],
  defaultOrder: { field: "uid", desc: false },
  sortValue: (r, f) => (f === "name" ? r.name : r.uid),
  uidOf: (r) => r.uid,
};

/** An in-memory window over rows, implementing the store's keyset contract for these tests. */
function windowOver(rows: Row[]) {
  const calls: ListWindow[] = [];
  const fetch = async (w: ListWindow): Promise<ListSlice<Row>> => {
    calls.push(w);
    const key = (r: Row) => [w.order.field === "name" ? r.name : r.uid, r.uid] as const;
    const cmp = (a: readonly string[], b: readonly string[]) =>
      a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : a[1]! < b[1]! ? -1 : a[1]! > b[1]! ? 1 : 0;
    const dir = w.order.desc ? -1 : 1;
    const sorted = [...rows].sort((a, b) => dir * cmp(key(a), key(b)));
    const after = w.after;
    const rest = after
      ? sorted.filter((r) => dir * cmp(key(r), [String(after.value), after.uid]) > 0)
      : sorted;
    return { rows: rest.slice(w.skip, w.skip + w.limit + 1), total: BigInt(rows.length) };
  };
  return { fetch, calls };
}

const rows: Row[] = Array.from({ length: 7 }, (_, i) => ({ uid: `u${i}`, name: `n${i % 3}` }));

describe("PageTokenCodec.queryHash", () => {
  const sha = (text: string) => createHash("sha256").update(text).digest("base64url").slice(0, 22);

  it("hashes the canonical JSON (sorted keys), also when asked again (memoized)", () => {
    const expected = sha(
      '{"order":{"desc":false,"field":"uid"},"query":{"name":"a","uidp":{"descendantsOf":"x"}}}',
    );
    for (let i = 0; i < 3; i++) {
      const query = {
        query: { uidp: { descendantsOf: "x" }, name: "a" },
        order: { field: "uid", desc: false },
      };
      assert.equal(PageTokenCodec.queryHash(query), expected, `call ${i}`);
    }
    const reordered = {
      order: { desc: false, field: "uid" },
      query: { name: "a", uidp: { descendantsOf: "x" } },
    };
    assert.equal(PageTokenCodec.queryHash(reordered), expected, "key order does not matter");
    assert.notEqual(
      PageTokenCodec.queryHash({ ...reordered, order: { desc: true, field: "uid" } }),
      expected,
      "another order",
    );
  });

  it("hashes values plain JSON cannot write (bigints as decimal strings)", () => {
    assert.equal(PageTokenCodec.queryHash({ n: 5n }), sha('{"n":"5"}'), "bigint");
    assert.equal(PageTokenCodec.queryHash({ n: 5n }), sha('{"n":"5"}'), "bigint again");
  });
});

describe("parseOrderBy", () => {
  it("accepts snake, camel and created_at spellings with a direction", () => {
    const all = ["uid", "name", "create_time", "update_time"] as const;
    assert.deepEqual(parseOrderBy("created_at desc", all, spec.defaultOrder), {
      field: "create_time",
      desc: true,
    });
    assert.deepEqual(parseOrderBy("createTime", all, spec.defaultOrder), {
      field: "create_time",
      desc: false,
    });
    assert.deepEqual(parseOrderBy(" name   ASC ", all, spec.defaultOrder), { field: "name", desc: false });
    assert.deepEqual(parseOrderBy("", all, spec.defaultOrder), spec.defaultOrder);
  });
  it("rejects unknown fields, disallowed fields and bad directions on order_by", () => {
    for (const bad of ["colour", "name up", "name desc extra", "update_time"]) {
      assert.throws(
        () => parseOrderBy(bad, ["uid", "name"], spec.defaultOrder),
        (e: unknown) => e instanceof DomainError && e.details.fieldViolations?.[0]?.field === "order_by",
        bad,
      );
    }
  });
});

describe("paginate", () => {
  let now = 1_000_000;
  const clock = { now: () => now };
  const codec = new PageTokenCodec(Buffer.from("secret"), clock);

  it("pages every row exactly once in the requested order", async () => {
    for (const orderBy of ["name", "name desc", "uid desc", ""]) {
      const { fetch } = windowOver(rows);
      const seen: string[] = [];
      let token = "";
      do {
        const page = await paginate(
          { pageSize: 3, pageToken: token, orderBy, skip: 0 },
          { f: 1 },
          spec,
          codec,
          fetch,
        );
        assert.equal(page.totalCount, 7n);
        seen.push(...page.items.map((r) => r.uid));
        token = page.nextPageToken;
      } while (token);
      assert.equal(new Set(seen).size, 7, orderBy);
      assert.equal(seen.length, 7, orderBy);
    }
  });

  it("defaults to 50, clamps to 200 and rejects negatives", async () => {
    const { fetch, calls } = windowOver(rows);
    await paginate({ pageSize: 0, pageToken: "", orderBy: "", skip: 0 }, {}, spec, codec, fetch);
    await paginate({ pageSize: 5000, pageToken: "", orderBy: "", skip: 0 }, {}, spec, codec, fetch);
    assert.deepEqual(
      calls.map((c) => c.limit),
      [50, 200],
    );
    await assert.rejects(
      paginate({ pageSize: -1, pageToken: "", orderBy: "", skip: 0 }, {}, spec, codec, fetch),
      DomainError,
    );
    await assert.rejects(
      paginate({ pageSize: 1, pageToken: "", orderBy: "", skip: -2 }, {}, spec, codec, fetch),
      DomainError,
    );
  });

  it("counts as skipped only the rows left after the cursor, not the whole result", async () => {
    const { fetch } = windowOver(rows);
    const first = await paginate(
      { pageSize: 2, pageToken: "", orderBy: "", skip: 0 },
      {},
      spec,
      codec,
      fetch,
    );
    assert.equal(first.skipped, 0);
    const past = { pageSize: 2, pageToken: first.nextPageToken, orderBy: "", skip: 10 };
    const beyond = await paginate(past, {}, spec, codec, fetch);
    assert.deepEqual(beyond.items, []);
    assert.equal(beyond.skipped, 5, "7 rows, 2 served: only 5 were left to skip");
    const within = await paginate({ ...past, skip: 3 }, {}, spec, codec, fetch);
    assert.deepEqual(
      within.items.map((r) => r.uid),
      ["u5", "u6"],
    );
    assert.equal(within.skipped, 3);
    const third = await paginate({ ...past, skip: 1 }, {}, spec, codec, fetch);
    const last = await paginate(
      { pageSize: 2, pageToken: third.nextPageToken, orderBy: "", skip: 9 },
      {},
      spec,
      codec,
      fetch,
    );
    assert.equal(
      last.skipped,
      1 + 2,
      "1 skipped before, then the 2 rows after u4 (of 7: 2 served, 1 skipped, 2 served)",
    );
  });

  it("binds tokens to their query, refuses tampering, and restarts silently after 3 days", async () => {
    const { fetch } = windowOver(rows);
    const first = await paginate(
      { pageSize: 2, pageToken: "", orderBy: "name", skip: 1 },
      { q: "a" },
      spec,
      codec,
      fetch,
    );
    assert.equal(first.skipped, 1);
    const again = { pageSize: 2, pageToken: first.nextPageToken, orderBy: "name", skip: 0 };
    const second = await paginate(again, { q: "a" }, spec, codec, fetch);
    assert.notDeepEqual(second.items, first.items);
    assert.equal(second.skipped, 1, "skipped accumulates across pages");
    await assert.rejects(paginate(again, { q: "b" }, spec, codec, fetch), /different query/);
    await assert.rejects(
      paginate({ ...again, orderBy: "name desc" }, { q: "a" }, spec, codec, fetch),
      /different query/,
    );
    await assert.rejects(
      paginate({ ...again, pageToken: `${first.nextPageToken}x` }, { q: "a" }, spec, codec, fetch),
      /invalid page token/,
    );
    const otherSecret = new PageTokenCodec(Buffer.from("other"), clock);
    await assert.rejects(paginate(again, { q: "a" }, spec, otherSecret, fetch), /invalid page token/);
    now += PAGE_TOKEN_TTL_MS + 1;
    const restarted = await paginate(again, { q: "a" }, spec, codec, fetch);
    const fresh = await paginate({ ...again, pageToken: "" }, { q: "a" }, spec, codec, fetch);
    assert.deepEqual(restarted.items, fresh.items, "an expired token restarts from the first page");
  });
});
