import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decodeChanges, encodeChanges } from "../../../../src/storage/sql/postgres-change-feed.js";

describe("change notification payloads", () => {
  it("carry the instance and the tables; the sending instance skips its own", () => {
    const payload = encodeChanges("a1", ["role_bindings", "groups"]);
    assert.equal(payload, "a1 role_bindings,groups");
    assert.deepEqual(decodeChanges(payload, "b2"), {
      tables: ["role_bindings", "groups"],
      everything: false,
    });
    assert.equal(decodeChanges(payload, "a1"), undefined);
  });

  it("stay under NOTIFY's 8000-byte limit: a longer list is sent as everything", () => {
    const tables = Array.from({ length: 1000 }, (_, i) => `table_${i}`);
    const payload = encodeChanges("a1", tables);
    assert.ok(Buffer.byteLength(payload) < 8000);
    assert.deepEqual(decodeChanges(payload, "b2"), { tables: [], everything: true });
  });

  it("ignore a malformed payload", () => {
    assert.equal(decodeChanges("no-space", "b2"), undefined);
    assert.equal(decodeChanges(" leading", "b2"), undefined);
  });
});
