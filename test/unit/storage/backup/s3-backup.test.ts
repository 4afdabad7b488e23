import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { cp, mkdtemp, open as openFile, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { BackupFormatError } from "../../../../src/storage/backup/backup-manifest.js";
import { restoreBackup } from "../../../../src/storage/backup/restore-backup.js";
import { keyOf, takeBackup } from "../../../../src/storage/backup/take-backup.js";
import type { BlobDriver } from "../../../../src/storage/blobs/blob-driver.js";
import { createS3BlobDriver } from "../../../../src/storage/blobs/s3/s3-blob-driver.js";
import { snapshotSqlite } from "../../../../src/storage/sql/database-backup.js";
import { openStore } from "../../../../src/storage/sql/open-store.js";
import { startTestS3rver, type TestS3rver } from "../../../conformance/blobs/blob-test-backends.js";
import { groupRow, repoRow, T0 } from "../../../conformance/store/fixtures.js";

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
const sha256 = (data: string) => `sha256:${createHash("sha256").update(data).digest("hex")}`;

async function keysOf(driver: BlobDriver): Promise<string[]> {
  const keys: string[] = [];
  for await (const entry of driver.list("")) keys.push(entry.key);
  return keys;
}

// A backup of a deployment whose blobs are in S3 (s3rver in-process): the objects are read through
// the driver into files; a restore puts them into another S3 prefix, verified on the way, and a
// blob flipped in the backup fails its upload so that nothing is left under the target prefix.
const s3rver = await startTestS3rver();
describe("backup and restore with an S3 blob store", { skip: "skip" in s3rver ? s3rver.skip : false }, () => {
  let dir: string;
  let server: TestS3rver;
  const drivers: BlobDriver[] = [];
  const digests: string[] = [];
  const s3 = (prefix: string) => {
    const driver = createS3BlobDriver({ ...server.options, prefix });
    drivers.push(driver);
    return driver;
  };

  before(async () => {
    server = s3rver as TestS3rver;
    dir = await mkdtemp(join(tmpdir(), "wharf-s3-backup-"));
    const source = s3("source");
    const store = await openStore({ sqlitePath: join(dir, "source.db") });
    try {
      const group = groupRow("", "s3-org");
      await store.groups.insert(group);
      const repo = repoRow(group.uid, "app");
      await store.repos.insert(repo);
      for (const text of ["s3 layer one", "s3 layer two, a little longer"]) {
        const digest = sha256(text);
        digests.push(digest);
        await source.put(keyOf(digest), Readable.from([Buffer.from(text)]));
        await store.blobs.link(repo.uid, { digest, size: text.length, createTime: T0 }, T0);
      }
    } finally {
      await store.close();
    }
    const report = await takeBackup(join(dir, "backup"), {
      engine: "sqlite",
      database: { file: "database.sqlite", format: "sqlite" },
      snapshot: (file) => snapshotSqlite(join(dir, "source.db"), file),
      blobs: source,
      blobRoot: undefined,
      stillRecorded: async () => true,
    });
    assert.equal(report.copied, 2);
  });
  after(async () => {
    for (const driver of drivers) await driver.close();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("copies the S3 objects into the backup folder and restores them into another prefix", async () => {
    for (const digest of digests) {
      assert.equal(sha256(await readFile(join(dir, "backup", keyOf(digest)), "utf8")), digest);
    }
    const target = s3("restored");
    await restoreBackup(join(dir, "backup"), {
      database: { sqlitePath: join(dir, "restored", "wharf.db") },
      blobs: target,
      where: { database: "restored", blobStore: "s3://restored" },
      env: process.env,
    });
    assert.deepEqual((await keysOf(target)).sort(), digests.map(keyOf).sort());
  });

  it("leaves nothing in the target prefix when a blob of the backup is damaged", async () => {
    await cp(join(dir, "backup"), join(dir, "flipped"), { recursive: true });
    const handle = await openFile(join(dir, "flipped", keyOf(digests[1] as string)), "r+");
    await handle.write(Buffer.from("S"), 0, 1, 0);
    await handle.close();
    const target = s3("damaged");
    await assert.rejects(
      restoreBackup(join(dir, "flipped"), {
        database: { sqlitePath: join(dir, "damaged", "wharf.db") },
        blobs: target,
        where: { database: "damaged", blobStore: "s3://damaged" },
        env: process.env,
      }),
      BackupFormatError,
    );
    assert.deepEqual(await keysOf(target), []);
  });
});
