import { type ConfigInput, loadConfig } from "../../config/config.js";
import { databaseOf, prepareConfiguredDatabase } from "../../config/open-configured-store.js";
import { migrateDatabase, pendingDatabaseMigrations } from "../../storage/sql/database-migrations.js";
import type { CommandOutput } from "./command-output.js";

/**
 * `wharf migrate [--dry-run]`, for operators who migrate before a rolling upgrade. Without
 * `dryRun`: readies the database as `serve` does (creating a missing PostgreSQL database), applies
 * the pending migrations (serialized with servers and other migrators) and prints `applied <name>`
 * per migration on `out.stdout`. With `dryRun`: prints each pending migration's name and changes
 * nothing, not even creating the database, the SQLite file or the migration table. Either prints
 * `nothing to migrate` when none is pending. A schema newer than this build rejects with
 * SchemaNewerError (one line), changing nothing.
 */
export async function runMigrate(
  input: ConfigInput,
  opts: { dryRun: boolean },
  out: CommandOutput,
): Promise<number> {
  const config = loadConfig(input);
  let names: string[];
  if (opts.dryRun) {
    names = await pendingDatabaseMigrations(databaseOf(config));
  } else {
    await prepareConfiguredDatabase(config);
    names = (await migrateDatabase(databaseOf(config))).map((name) => `applied ${name}`);
  }
  out.stdout.write(names.length === 0 ? "nothing to migrate\n" : `${names.join("\n")}\n`);
  return 0;
}
