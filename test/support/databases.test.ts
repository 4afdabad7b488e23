import assert from "node:assert/strict";
import { after, it } from "node:test";
import type { Store } from "../../src/storage/store.js";
import { forEachEngine } from "./databases.js";

// A suite's own `after` hooks (closing its servers) run while its database is still there: it is
// dropped only after them. Dropped first (with force, on PostgreSQL), it cut a running server's
// connections, which then failed the test file after every test had passed.
forEachEngine("forEachEngine disposes after the suite's own hooks", (db) => {
  let store: Store | undefined;

  it("opens a store", async () => {
    store = await db.open();
    await store.settings.putIfAbsent("probe", "1");
  });

  after(async () => {
    assert.ok(store, "the store was opened");
    assert.equal(await store.settings.get("probe"), "1");
  });
});
