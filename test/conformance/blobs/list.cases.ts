import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { BlobFixture } from "./blob-test-backends.js";
import { listAll, listKeys, streamOf } from "./blob-test-data.js";

/** list: logical keys once each, sorted, filtered by a plain string prefix, no internals. */
export function listCases(fx: BlobFixture): void {
  describe("list", () => {
    /**
     * Keys whose code-unit order differs from a naive directory walk ("d-e" < "d.f" < "d/x" < "d0")
     * and from S3's raw order of chunk objects ("p/a-b" < "p/a.parts/…"). No key is also a
     * directory of another (the filesystem cannot hold both).
     */
    async function populate(ns: string): Promise<Map<string, number>> {
      const d = fx.driver;
      await d.append(`${ns}p/a`, streamOf("abc"));
      await d.append(`${ns}p/a`, streamOf("defg"));
      await d.put(`${ns}p/a-b`, streamOf("1"));
      await d.put(`${ns}p/a0`, streamOf("12"));
      await d.put(`${ns}p/d/x`, streamOf("123"));
      await d.put(`${ns}p/d-e`, streamOf("1234"));
      await d.append(`${ns}p/d.f`, streamOf("12345"));
      await d.put(`${ns}p/d0`, streamOf("123456"));
      await d.append(`${ns}p/g/h/i`, streamOf("1234567"));
      await d.put(`${ns}q/z`, streamOf("12345678"));
      return new Map([
        [`${ns}p/a`, 7],
        [`${ns}p/a-b`, 1],
        [`${ns}p/a0`, 2],
        [`${ns}p/d-e`, 4],
        [`${ns}p/d.f`, 5],
        [`${ns}p/d/x`, 3],
        [`${ns}p/d0`, 6],
        [`${ns}p/g/h/i`, 7],
        [`${ns}q/z`, 8],
      ]);
    }

    it("lists every object under a prefix once, sorted, with its size and mtime", async () => {
      const d = fx.driver;
      const ns = fx.ns();
      const sizes = await populate(ns);
      const entries = await listAll(d, `${ns}p/`);
      assert.deepEqual(
        entries.map((e) => [e.key, e.size]),
        [...sizes].filter(([k]) => k.startsWith(`${ns}p/`)),
      );
      for (const entry of entries) {
        const st = await d.stat(entry.key);
        assert.deepEqual({ size: entry.size, modifiedTime: entry.modifiedTime }, st, entry.key);
      }
      assert.deepEqual(await listKeys(d, ns), [...sizes.keys()]);
    });

    it("treats the prefix as a plain string prefix", async () => {
      const d = fx.driver;
      const ns = fx.ns();
      await populate(ns);
      assert.deepEqual(await listKeys(d, `${ns}p/a`), [`${ns}p/a`, `${ns}p/a-b`, `${ns}p/a0`]);
      assert.deepEqual(await listKeys(d, `${ns}p/a.`), []);
      assert.deepEqual(await listKeys(d, `${ns}p/d`), [
        `${ns}p/d-e`,
        `${ns}p/d.f`,
        `${ns}p/d/x`,
        `${ns}p/d0`,
      ]);
      assert.deepEqual(await listKeys(d, `${ns}p/d/`), [`${ns}p/d/x`]);
      assert.deepEqual(await listKeys(d, `${ns}p/d.`), [`${ns}p/d.f`]);
      assert.deepEqual(await listKeys(d, `${ns}p/d.f`), [`${ns}p/d.f`]);
      assert.deepEqual(await listKeys(d, `${ns}p/g`), [`${ns}p/g/h/i`]);
      assert.deepEqual(await listKeys(d, `${ns}p/g/h/`), [`${ns}p/g/h/i`]);
      assert.deepEqual(await listKeys(d, `${ns}p/zz`), []);
      assert.deepEqual(await listKeys(d, `${ns}nothing/`), []);
    });

    it("the whole namespace lists logical keys only, sorted, without internals", async () => {
      const d = fx.driver;
      const ns = fx.ns();
      const sizes = await populate(ns);
      const all = await listKeys(d, "");
      assert.deepEqual(
        all.filter((k) => k.startsWith(ns)),
        [...sizes.keys()],
      );
      assert.deepEqual(all, [...all].sort(), "sorted");
      assert.equal(new Set(all).size, all.length, "each key once");
      for (const key of all) {
        assert.ok(!key.includes(".parts/") && !key.startsWith("_tmp"), `no internals: ${key}`);
      }
    });

    it("follows appends, commits and deletes", async () => {
      const d = fx.driver;
      const ns = fx.ns();
      await d.append(`${ns}u/data`, streamOf("12"));
      assert.deepEqual(
        (await listAll(d, ns)).map((e) => [e.key, e.size]),
        [[`${ns}u/data`, 2]],
      );
      await d.append(`${ns}u/data`, streamOf("345"));
      assert.deepEqual(
        (await listAll(d, ns)).map((e) => [e.key, e.size]),
        [[`${ns}u/data`, 5]],
      );
      await d.commit(`${ns}u/data`, `${ns}b/data`);
      assert.deepEqual(
        (await listAll(d, ns)).map((e) => [e.key, e.size]),
        [[`${ns}b/data`, 5]],
      );
      await d.delete(`${ns}b/data`);
      assert.deepEqual(await listAll(d, ns), []);
    });
  });
}
