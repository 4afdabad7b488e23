import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { BlobFixture } from "./blob-test-backends.js";
import { listKeys, readBytes, streamOf } from "./blob-test-data.js";

/** Keys every method must reject with TypeError, before touching storage. */
export const INVALID_KEYS = [
  "",
  "/a",
  "a/",
  "a//b",
  "..",
  ".",
  "a/../b",
  "a/./b",
  "../a",
  "a/..",
  "a\\b",
  "\\a",
  "a b",
  "a\0b",
  "caf\u00e9",
  "a?b",
  "a%2Fb",
  "_tmp/x",
  "_tmp",
  "a.parts/00000001",
  "x/y.parts",
  "x".repeat(201),
  `${"a/".repeat(450)}a`,
];

/** Key validation, identical in every driver. */
export function keyCases(fx: BlobFixture): void {
  describe("keys", () => {
    it("every method rejects an invalid key with TypeError", async () => {
      const d = fx.driver;
      const raw = await fx.rawKeys();
      for (const key of INVALID_KEYS) {
        const label = JSON.stringify(key);
        await assert.rejects(d.stat(key), TypeError, `stat ${label}`);
        await assert.rejects(d.read(key), TypeError, `read ${label}`);
        await assert.rejects(d.put(key, streamOf("x")), TypeError, `put ${label}`);
        await assert.rejects(d.append(key, streamOf("x")), TypeError, `append ${label}`);
        await assert.rejects(d.commit(key, "valid/key"), TypeError, `commit from ${label}`);
        await assert.rejects(d.commit("valid/key", key), TypeError, `commit to ${label}`);
        await assert.rejects(d.delete(key), TypeError, `delete ${label}`);
      }
      assert.deepEqual(await fx.rawKeys(), raw, "nothing was written");
    });

    it("put and append destroy their source when the key is invalid", async () => {
      const d = fx.driver;
      for (const write of [d.put.bind(d), d.append.bind(d)]) {
        const source = streamOf("x");
        await assert.rejects(write("/bad", source), TypeError);
        assert.equal(source.destroyed, true);
      }
    });

    it("list rejects an invalid prefix with TypeError (synchronously)", () => {
      const d = fx.driver;
      for (const prefix of ["/", "/a", "a//", "../", "a/../", "a\\", "_tmp/", "x.parts/", "caf\u00e9"]) {
        assert.throws(() => d.list(prefix), TypeError, JSON.stringify(prefix));
      }
    });

    it("accepts keys with dots, dashes, underscores and tildes, including '..' inside a segment", async () => {
      const d = fx.driver;
      const ns = fx.ns();
      const keys = [
        `${ns}a..b`,
        `${ns}.hidden`,
        `${ns}x/_tmp/y`,
        `${ns}v1.2.3_rc-1~x`,
        `${ns}parts/x.partsx`,
        `${ns}${"s".repeat(200)}`,
      ];
      for (const [i, key] of keys.entries()) await d.put(key, streamOf(String(i)));
      for (const [i, key] of keys.entries())
        assert.deepEqual(await readBytes(d, key), Buffer.from(String(i)), key);
      assert.deepEqual(await listKeys(d, ns), [...keys].sort());
    });
  });
}
