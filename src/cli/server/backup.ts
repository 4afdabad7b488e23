import { resolve } from "node:path";
import { type ConfigInput, loadConfig } from "../../config/config.js";
import { databaseOf, openConfiguredStore } from "../../config/open-configured-store.js";
import { storageLocationsOf } from "../../config/storage-locations.js";
import { takeBackup } from "../../storage/backup/take-backup.js";
import { bindBlobStore } from "../../storage/blob-store-identity.js";
import { openBlobDriver, parseBlobDriverUrl } from "../../storage/blobs/open-blob-driver.js";
import { snapshotPostgres, snapshotSqlite } from "../../storage/sql/database-backup.js";
import { findPostgresTool } from "../../storage/sql/postgres-tools.js";
import type { CommandOutput } from "./command-output.js";

/**
 * `wharf backup --to DIR`: a consistent backup of the configured deployment while its servers run
 * (`takeBackup`): SQLite through the online backup API (`database.sqlite`), PostgreSQL through
 * `pg_dump --format=custom` on an exported snapshot (`database.pgdump`; a clear error naming
 * pg_dump when it is not installed), then the blobs that snapshot records (hard links from a
 * filesystem store on the same device, else copies; S3 objects become files) and
 * `wharf-backup.json`. Progress on `out.stderr`; the report as one JSON line on `out.stdout`.
 * Exits 1 when blob storage lacks blobs the metadata records (the backup is written, listing
 * them); refuses, writing nothing, a DIR that exists and is not empty, or a blob store of another
 * database (ADR 0016).
 */
export async function runBackup(
  input: ConfigInput,
  opts: { to: string },
  out: CommandOutput,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const config = loadConfig(input);
  const dir = resolve(opts.to);
  const store = await openConfiguredStore(config);
  const blobs = await openBlobDriver(config.blobStore, config.dataDir);
  try {
    await bindBlobStore(store, blobs, storageLocationsOf(config));
    const blobConfig = parseBlobDriverUrl(config.blobStore, config.dataDir);
    const database = databaseOf(config);
    const say = (line: string) => out.stderr.write(`wharf backup: ${line}\n`);
    const report = await takeBackup(
      dir,
      {
        engine: "databaseUrl" in database ? "postgres" : "sqlite",
        database:
          "databaseUrl" in database
            ? { file: "database.pgdump", format: "pg_dump-custom" }
            : { file: "database.sqlite", format: "sqlite" },
        snapshot: (file) =>
          "databaseUrl" in database
            ? snapshotPostgres(database.databaseUrl, file, env)
            : snapshotSqlite(database.sqlitePath, file),
        ...("databaseUrl" in database && { ready: () => findPostgresTool("pg_dump", env) }),
        blobs,
        blobRoot: blobConfig.kind === "filesystem" ? blobConfig.root : undefined,
        stillRecorded: async (digest) => (await store.blobs.get(digest)) !== undefined,
      },
      say,
    );
    out.stdout.write(`${JSON.stringify(report)}\n`);
    if (report.missing.length > 0) {
      out.stderr.write(
        `wharf backup: ${report.missing.length} blobs the metadata records are missing from blob storage or damaged (listed as "missing" in ${dir}/wharf-backup.json); run wharf fsck\n`,
      );
      return 1;
    }
    return 0;
  } finally {
    await Promise.allSettled([store.close(), blobs.close()]);
  }
}
