import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  cp,
  mkdir,
  mkdtemp,
  open as openFile,
  readdir,
  readFile,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, before, describe, it } from "node:test";
import {
  BACKUP_MANIFEST_FILE,
  BackupFormatError,
  readBackupManifest,
} from "../../../../src/storage/backup/backup-manifest.js";
import { RestoreTargetError, restoreBackup } from "../../../../src/storage/backup/restore-backup.js";
import { keyOf, takeBackup } from "../../../../src/storage/backup/take-backup.js";
import type { BlobDriver } from "../../../../src/storage/blobs/blob-driver.js";
import { createFilesystemBlobDriver } from "../../../../src/storage/blobs/filesystem/filesystem-blob-driver.js";
import { snapshotSqlite } from "../../../../src/storage/sql/database-backup.js";
import { openStore } from "../../../../src/storage/sql/open-store.js";
import { groupRow, repoRow, T0 } from "../../../conformance/store/fixtures.js";

const sha256 = (data: string) => `sha256:${createHash("sha256").update(data).digest("hex")}`;

/** Every file under `root`, relative, sorted ("" when the folder does not exist). */
async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(root.length + 1))
    .sort();
}

// `restoreBackup` on real files: a SQLite deployment backed up by `takeBackup`, restored into
// empty targets; a blob flipped in the backup fails the restore and leaves the target empty; a
// non-empty target and malformed manifests are refused with errors naming the problem.
describe("restoreBackup", () => {
  let dir: string;
  let backup: string;
  const digests: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "wharf-restore-"));
    const store = await openStore({ sqlitePath: join(dir, "source.db") });
    const blobs = createFilesystemBlobDriver({ root: join(dir, "source-blobs") });
    try {
      await store.settings.putIfAbsent("store_id", "0123456789abcdef0123456789abcdef");
      const group = groupRow("", "restore-org");
      await store.groups.insert(group);
      const repo = repoRow(group.uid, "app");
      await store.repos.insert(repo);
      for (const text of ["first layer", "second layer"]) {
        const digest = sha256(text);
        digests.push(digest);
        await blobs.put(keyOf(digest), Readable.from([Buffer.from(text)]));
        await store.blobs.link(repo.uid, { digest, size: text.length, createTime: T0 }, T0);
      }
    } finally {
      await store.close();
    }
    backup = join(dir, "backup");
    await takeBackup(backup, {
      engine: "sqlite",
      database: { file: "database.sqlite", format: "sqlite" },
      snapshot: (file) => snapshotSqlite(join(dir, "source.db"), file),
      blobs,
      blobRoot: undefined, // copies: the test flips bytes in the backup, not in the source
      stillRecorded: async () => true,
    });
    await blobs.close();
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const target = async (name: string) => {
    const root = join(dir, name);
    await mkdir(root, { recursive: true });
    const blobs: BlobDriver = createFilesystemBlobDriver({ root: join(root, "blobs") });
    return {
      root,
      blobs,
      restoreTarget: {
        database: { sqlitePath: join(root, "wharf.db") },
        blobs,
        where: { database: join(root, "wharf.db"), blobStore: join(root, "blobs") },
        env: process.env,
      },
    };
  };

  it("restores the database and every blob into an empty target and stamps the store id", async () => {
    const t = await target("good");
    try {
      const report = await restoreBackup(backup, t.restoreTarget);
      assert.deepEqual(report, {
        engine: "sqlite",
        storeId: "0123456789abcdef0123456789abcdef",
        blobs: 2,
        bytes: "first layer".length + "second layer".length,
        missing: 0,
      });
      const restored = await openStore({ sqlitePath: join(t.root, "wharf.db") });
      try {
        for (const digest of digests) assert.ok(await restored.blobs.get(digest), digest);
      } finally {
        await restored.close();
      }
      assert.deepEqual(
        (await filesUnder(join(t.root, "blobs"))).filter((f) => !f.startsWith("_tmp")),
        [...digests.map(keyOf).sort(), "wharf-store-id"].sort(),
      );
    } finally {
      await t.blobs.close();
    }
  });

  it("refuses a target whose database or blob store holds anything, changing nothing", async () => {
    const t = await target("busy");
    try {
      await t.blobs.put("blobs/sha256/aa/aabb", Readable.from([Buffer.from("someone's")]));
      await assert.rejects(restoreBackup(backup, t.restoreTarget), (err: unknown) => {
        assert.ok(err instanceof RestoreTargetError);
        assert.match(
          err.message,
          /the blob store is not empty \(it holds blobs\/sha256\/aa\/aabb\); nothing was changed/,
        );
        return true;
      });
      await assert.rejects(stat(join(t.root, "wharf.db")), { code: "ENOENT" });
      await writeFile(join(t.root, "wharf.db"), "");
      await t.blobs.delete("blobs/sha256/aa/aabb");
      await assert.rejects(restoreBackup(backup, t.restoreTarget), /the database is not empty/);
    } finally {
      await t.blobs.close();
    }
  });

  it("fails on a blob whose bytes do not hash to its digest, and leaves the target empty", async () => {
    const flipped = join(dir, "flipped");
    await rm(flipped, { recursive: true, force: true });
    await cp(backup, flipped, { recursive: true });
    const victim = join(flipped, keyOf(digests[1] as string));
    const handle = await openFile(victim, "r+");
    await handle.write(Buffer.from("X"), 0, 1, 0);
    await handle.close();
    const t = await target("damaged");
    try {
      await assert.rejects(restoreBackup(flipped, t.restoreTarget), (err: unknown) => {
        assert.ok(err instanceof BackupFormatError, String(err));
        assert.match(
          err.message,
          new RegExp(`${keyOf(digests[1] as string)} in the backup is damaged: 12 bytes hashing to sha256:`),
        );
        return true;
      });
      assert.deepEqual(
        (await filesUnder(join(t.root, "blobs"))).filter((f) => !f.startsWith("_tmp")),
        [],
      );
      await assert.rejects(stat(join(t.root, "wharf.db")), { code: "ENOENT" });
    } finally {
      await t.blobs.close();
    }
  });

  it("refuses folders that hold no finished backup, or a manifest that is not one", async () => {
    const empty = join(dir, "not-a-backup");
    await mkdir(empty, { recursive: true });
    await assert.rejects(readBackupManifest(empty), /holds no finished Wharf backup/);
    const write = (value: unknown) => writeFile(join(empty, BACKUP_MANIFEST_FILE), JSON.stringify(value));
    const good = JSON.parse(await readFile(join(backup, BACKUP_MANIFEST_FILE), "utf8"));
    for (const [value, why] of [
      ["{", /not JSON/],
      [{ ...good, format: "other" }, /"format" is not "wharf-backup"/],
      [{ ...good, version: 2 }, /version 2 is not one this wharf reads/],
      [{ ...good, engine: "mysql" }, /"engine"/],
      [
        { ...good, blobs: [{ ...good.blobs[0], path: "../../etc/passwd" }] },
        /blobs\[0\]: "path" must be a relative path/,
      ],
      [{ ...good, blobs: [{ ...good.blobs[0], size: -1 }] }, /blobs\[0\]: "size"/],
      [{ ...good, database: { ...good.database, digest: "md5:x" } }, /database: "digest" is malformed/],
      [{ ...good, database: { ...good.database, format: "pg_dump-custom" } }, /does not fit engine sqlite/],
    ] as const) {
      await (typeof value === "string" ? writeFile(join(empty, BACKUP_MANIFEST_FILE), value) : write(value));
      await assert.rejects(readBackupManifest(empty), (err: unknown) => {
        assert.ok(err instanceof BackupFormatError);
        assert.match(err.message, why);
        return true;
      });
    }
  });
});
