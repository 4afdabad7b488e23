import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * `dispatcher_owners` (ADR 0037): one row per running event dispatcher, named by the `owner` id it
 * leases lanes under (`subscriptions.lease_owner`), with the time of its last heartbeat. A live
 * dispatcher renews it every second; a lane whose owner's heartbeat is older than a few seconds is
 * leasable before its `lease_until`, so a killed process's lanes are taken over within seconds.
 * `host` and `pid` say which process it is (for operators, and tests that kill it).
 */
export function dispatcherOwnersMigration(dialect: DialectName): Migration {
  const key = dialect === "postgres" ? sql`text collate "C"` : sql`text`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("dispatcher_owners")
        .addColumn("owner", key, (c) => c.primaryKey())
        .addColumn("heartbeat_time", "bigint", (c) => c.notNull())
        .addColumn("host", "text", (c) => c.notNull())
        .addColumn("pid", "bigint", (c) => c.notNull())
        .addColumn("start_time", "bigint", (c) => c.notNull())
        .execute();
    },
  };
}
