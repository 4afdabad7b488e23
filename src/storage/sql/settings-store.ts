import type { SettingsStore } from "../settings-store.js";
import type { SqlContext } from "./sql-context.js";

/**
 * SettingsStore over `settings`; see `SettingsStore` in settings-store.ts. `putIfAbsent` is
 * race-safe across processes: INSERT … ON CONFLICT DO NOTHING, then a read of whatever value won.
 * `put` is an upsert (the last writer wins).
 */
export function createSettingsStore(ctx: SqlContext): SettingsStore {
  const { db } = ctx;
  const get = async (key: string) => {
    const r = await db.selectFrom("settings").select("value").where("key", "=", key).executeTakeFirst();
    return r?.value;
  };
  return {
    get,
    async putIfAbsent(key, value) {
      await db
        .insertInto("settings")
        .values({ key, value })
        .onConflict((oc) => oc.column("key").doNothing())
        .execute();
      const stored = await get(key);
      if (stored === undefined) throw new Error(`setting ${key} vanished after putIfAbsent`);
      return stored;
    },
    async put(key, value) {
      await db
        .insertInto("settings")
        .values({ key, value })
        .onConflict((oc) => oc.column("key").doUpdateSet({ value }))
        .execute();
    },
  };
}
