import { resolve } from "node:path";
import { type ConfigInput, loadConfig } from "../../config/config.js";
import { databaseOf } from "../../config/open-configured-store.js";
import { storageLocationsOf } from "../../config/storage-locations.js";
import { restoreBackup } from "../../storage/backup/restore-backup.js";
import { openBlobDriver } from "../../storage/blobs/open-blob-driver.js";
import type { CommandOutput } from "./command-output.js";

/**
 * `wharf restore --from DIR`: restores a `wharf backup` into the configured database and blob
 * store, which must both be empty (no SQLite file in the data dir, or a PostgreSQL database without
 * tables; a blob store without objects); refuses otherwise, changing nothing (`restoreBackup`).
 * Every blob is verified against its digest as it is written; the database goes last. Progress on
 * `out.stderr`; the report as one JSON line on `out.stdout`. Start `wharf serve` on the same
 * configuration afterwards (it applies any newer migrations).
 */
export async function runRestore(
  input: ConfigInput,
  opts: { from: string },
  out: CommandOutput,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const config = loadConfig(input);
  const blobs = await openBlobDriver(config.blobStore, config.dataDir);
  try {
    const report = await restoreBackup(
      resolve(opts.from),
      { database: databaseOf(config), blobs, where: storageLocationsOf(config), env },
      (line) => out.stderr.write(`wharf restore: ${line}\n`),
    );
    out.stdout.write(`${JSON.stringify(report)}\n`);
    if (report.missing > 0) {
      out.stderr.write(
        `wharf restore: the backup lacked ${report.missing} blobs its metadata records (listed in its wharf-backup.json); wharf fsck names the images they break\n`,
      );
    }
    return 0;
  } finally {
    await blobs.close();
  }
}
