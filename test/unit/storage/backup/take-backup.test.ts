import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { systemClock } from "../../../../src/core/clock.js";
import { collectGarbage } from "../../../../src/registry/data-plane/garbage-collector.js";
import { readBackupManifest } from "../../../../src/storage/backup/backup-manifest.js";
import { keyOf, takeBackup } from "../../../../src/storage/backup/take-backup.js";
import type { BlobDriver } from "../../../../src/storage/blobs/blob-driver.js";
import { createFilesystemBlobDriver } from "../../../../src/storage/blobs/filesystem/filesystem-blob-driver.js";
import type { RepoRow } from "../../../../src/storage/registry-store.js";
import { snapshotSqlite } from "../../../../src/storage/sql/database-backup.js";
import { openStore } from "../../../../src/storage/sql/open-store.js";
import type { Store } from "../../../../src/storage/store.js";
import { groupRow, repoRow, T0 } from "../../../conformance/store/fixtures.js";

const sha256 = (data: Buffer | string) => `sha256:${createHash("sha256").update(data).digest("hex")}`;

// Garbage collection between a backup's database snapshot and its blob copy (ADR 0040): a real
// SQLite store and filesystem blob store, and the real collector run right after the first
// snapshot, deleting a blob that snapshot records. The backup must notice the missing bytes, find
// the blob gone from the live metadata, snapshot again, and finish without it; a blob the live
// metadata still records but storage lacks is listed as missing instead.
describe("takeBackup next to garbage collection", () => {
  let dir: string;
  let store: Store;
  let blobs: BlobDriver;
  let repo: RepoRow;
  const sqlitePath = () => join(dir, "wharf.db");

  const putBlob = async (text: string) => {
    const digest = sha256(text);
    await blobs.put(keyOf(digest), Readable.from([Buffer.from(text)]));
    await store.blobs.link(repo.uid, { digest, size: Buffer.byteLength(text), createTime: T0 }, T0);
    return digest;
  };
  const putManifest = async (n: number, blob: string, tag?: string) => {
    const content = Buffer.from(`{"n":${n}}`);
    await store.manifests.put(
      {
        repoUid: repo.uid,
        digest: sha256(content),
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        content,
        createTime: T0,
      },
      [{ digest: blob, kind: "blob" }],
    );
    if (tag !== undefined) {
      await store.tags.put({
        repoUid: repo.uid,
        name: tag,
        digest: sha256(content),
        deprecated: false,
        newUid: `${repo.uid}/00000000000000${n.toString(16).padStart(2, "0")}`,
        now: T0,
      });
    }
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "wharf-take-backup-"));
    store = await openStore({ sqlitePath: sqlitePath() });
    blobs = createFilesystemBlobDriver({ root: join(dir, "blobs") });
    const group = groupRow("", "backup-org");
    await store.groups.insert(group);
    repo = repoRow(group.uid, "app");
    await store.repos.insert(repo);
  });
  after(async () => {
    await store.close();
    await blobs.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("takes the snapshot again when the collector removed a blob after it, and ends without that blob", async () => {
    const kept = await putBlob("kept layer");
    const doomed = await putBlob("doomed layer");
    await putManifest(1, kept, "latest");
    await putManifest(2, doomed); // untagged, no history: dead for a collector with no grace and window
    let snapshots = 0;
    const lines: string[] = [];
    const target = join(dir, "backup");
    const report = await takeBackup(
      target,
      {
        engine: "sqlite",
        database: { file: "database.sqlite", format: "sqlite" },
        snapshot: async (file) => {
          const snapshot = await snapshotSqlite(sqlitePath(), file);
          if (snapshots++ === 0) {
            assert.ok(
              snapshot.blobs.some((b) => b.digest === doomed),
              "the first snapshot records the doomed blob",
            );
            const gc = await collectGarbage(
              { store, blobs, clock: systemClock },
              { graceMs: 0, historyWindowMs: 0 },
            );
            assert.equal(gc.blobs, 1, "the collector removed the doomed blob between snapshot and copy");
          }
          return snapshot;
        },
        blobs,
        blobRoot: join(dir, "blobs"),
        stillRecorded: async (digest) => (await store.blobs.get(digest)) !== undefined,
      },
      (line) => lines.push(line),
    );
    assert.equal(report.snapshots, 2);
    assert.deepEqual(report.missing, []);
    assert.ok(
      lines.some((l) => /1 blobs were collected by garbage collection after the snapshot/.test(l)),
      lines.join("\n"),
    );
    const manifest = await readBackupManifest(target);
    assert.deepEqual(
      manifest.blobs.map((b) => b.digest),
      [kept],
    );
    assert.equal(await readFile(join(target, keyOf(kept)), "utf8"), "kept layer");
    await assert.rejects(stat(join(target, keyOf(doomed))), { code: "ENOENT" });
  });

  it("copies through the blob driver (an S3 store's way) when there is no folder to link from", async () => {
    const target = join(dir, "backup-copied");
    const report = await takeBackup(target, {
      engine: "sqlite",
      database: { file: "database.sqlite", format: "sqlite" },
      snapshot: (file) => snapshotSqlite(sqlitePath(), file),
      blobs,
      blobRoot: undefined,
      stillRecorded: async (digest) => (await store.blobs.get(digest)) !== undefined,
    });
    assert.equal(report.linked, 0);
    assert.equal(report.copied, report.blobs);
    const manifest = await readBackupManifest(target);
    assert.ok(manifest.blobs.length > 0);
    for (const blob of manifest.blobs) {
      assert.equal(sha256(await readFile(join(target, blob.path))), blob.digest);
      assert.notEqual(
        (await stat(join(target, blob.path))).ino,
        (await stat(join(dir, "blobs", blob.path))).ino,
      );
    }
  });

  it("lists a blob the live metadata records but storage lacks as missing, and finishes", async () => {
    const lost = await putBlob("lost layer");
    await putManifest(3, lost, "lost");
    await blobs.delete(keyOf(lost));
    const target = join(dir, "backup-lost");
    const report = await takeBackup(target, {
      engine: "sqlite",
      database: { file: "database.sqlite", format: "sqlite" },
      snapshot: (file) => snapshotSqlite(sqlitePath(), file),
      blobs,
      blobRoot: join(dir, "blobs"),
      stillRecorded: async (digest) => (await store.blobs.get(digest)) !== undefined,
    });
    assert.equal(report.snapshots, 1);
    assert.deepEqual(report.missing, [{ digest: lost, size: "lost layer".length }]);
    assert.deepEqual((await readBackupManifest(target)).missing, report.missing);
  });
});
