import assert from "node:assert/strict";
import { mkdtemp, open as openFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import Database from "better-sqlite3";
import { newRootUid } from "../../../../src/core/uidp.js";
import { type OpenStoreOptions, openStore } from "../../../../src/storage/sql/open-store.js";
import {
  BACKSTOP_AUTOCHECKPOINT_PAGES,
  CHECKPOINT_INTERVAL_MS,
  startWalCheckpointer,
  WAL_SIZE_LIMIT_BYTES,
} from "../../../../src/storage/sql/wal-checkpointer.js";
import type { Store } from "../../../../src/storage/store.js";

const MiB = 1024 * 1024;
const dirs: string[] = [];
after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

async function open(
  walCheckpoints: OpenStoreOptions["walCheckpoints"],
): Promise<{ store: Store; file: string }> {
  const dir = await mkdtemp(join(tmpdir(), "wharf-wal-"));
  dirs.push(dir);
  const file = join(dir, "wharf.db");
  return { store: await openStore({ sqlitePath: file, walCheckpoints }), file };
}

const sizeOf = async (path: string) => (await stat(path)).size;

/** Commits about `mib` MiB of group rows, 100 rows (~200 KiB) per transaction. */
async function write(store: Store, mib: number): Promise<void> {
  const description = "d".repeat(2000);
  const rows = Math.ceil((mib * MiB) / description.length);
  for (let done = 0; done < rows; done += 100) {
    await store.transaction(async (tx) => {
      for (let i = done; i < Math.min(rows, done + 100); i++) {
        await tx.groups.insert({
          uid: newRootUid(),
          name: `g-${i}-${Math.random().toString(36).slice(2)}`,
          description,
          verified: false,
          createTime: 0,
          updateTime: 0,
        });
      }
    });
  }
}

/**
 * Small commits, two checkpoint intervals apart (one may land while a checkpoint still runs), until
 * `done` answers true, at most 10; whether it did.
 */
async function commitUntil(store: Store, done: () => Promise<boolean>): Promise<boolean> {
  for (let attempt = 0; attempt < 10; attempt++) {
    if (await done()) return true;
    await sleep(CHECKPOINT_INTERVAL_MS * 2);
    await write(store, 0.001);
  }
  return done();
}

/** Waits until the database file reaches `bytes` (only a checkpoint writes it); false after `ms`. */
async function fileReaches(file: string, bytes: number, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(25)) {
    if ((await sizeOf(file)) >= bytes) return true;
  }
  return (await sizeOf(file)) >= bytes;
}

describe("WAL checkpoints on their own thread", () => {
  it("copy a serving store's commits into the database file, which its commits alone do not", async () => {
    // 6 MiB is ~1,500 pages: past SQLite's default autocheckpoint (1,000), below the backstop (10,000).
    const withThread = await open("own-thread");
    const withoutThread = await open("other-thread");
    try {
      // Each file's own start: the thread may already have copied the migrations' pages into its file.
      const beforeWith = await sizeOf(withThread.file);
      const beforeWithout = await sizeOf(withoutThread.file);
      await write(withThread.store, 6);
      await write(withoutThread.store, 6);
      assert.ok(
        await fileReaches(withThread.file, beforeWith + 5 * MiB, 5000),
        "the checkpoint thread copied the WAL into the database file",
      );
      await sleep(CHECKPOINT_INTERVAL_MS * 5);
      assert.ok(
        (await sizeOf(withoutThread.file)) < beforeWithout + MiB,
        "without the thread, commits below the backstop leave the pages in the WAL",
      );
    } finally {
      await withThread.store.close();
      await withoutThread.store.close();
    }
  });

  it("cut a WAL file that grew past its limit back when a commit starts it over", async () => {
    const { store, file } = await open("own-thread");
    try {
      const start = await sizeOf(file);
      // One transaction on a connection of its own, without autocheckpoint: the WAL grows past the
      // limit in one go, as when a long read kept checkpoints from finishing.
      const over = Math.ceil(WAL_SIZE_LIMIT_BYTES / MiB) + 4;
      const raw = new Database(file, { fileMustExist: true });
      try {
        raw.pragma("busy_timeout = 5000");
        raw.pragma("wal_autocheckpoint = 0");
        raw.transaction(() => {
          raw.exec("create table filler (b blob not null)");
          const insert = raw.prepare("insert into filler (b) values (zeroblob(?))");
          for (let i = 0; i < over; i++) insert.run(MiB);
        })();
      } finally {
        raw.close();
      }
      const grown = await sizeOf(`${file}-wal`);
      assert.ok(grown > WAL_SIZE_LIMIT_BYTES, `the WAL grew past the limit: ${grown} bytes`);
      assert.ok(
        await fileReaches(file, start + over * MiB, 10_000),
        "the checkpoint thread copied it into the database file",
      );
      // The store's next commit after a complete checkpoint starts the WAL over and cuts it back.
      const cut = await commitUntil(store, async () => (await sizeOf(`${file}-wal`)) <= WAL_SIZE_LIMIT_BYTES);
      assert.ok(cut, `the WAL was cut back: ${await sizeOf(`${file}-wal`)} bytes, not ${grown}`);
    } finally {
      await store.close();
    }
  });

  it("keep a WAL that cycles up to the backstop at its size instead of cutting and regrowing it", async () => {
    const { store, file } = await open("own-thread");
    try {
      // ~8 MiB of group rows write the WAL up to the backstop, as a steady write load does; then
      // small commits until one starts the WAL over.
      await write(store, 8);
      const cycled = await sizeOf(`${file}-wal`);
      assert.ok(cycled >= BACKSTOP_AUTOCHECKPOINT_PAGES * 4096, `the WAL reached ${cycled} bytes`);
      assert.ok(await fileReaches(file, 8 * MiB, 10_000), "the batch was checkpointed");
      // The WAL header's checkpoint sequence number (bytes 12-15) changes when the WAL starts over;
      // read alone, not with the ~41 MB behind it.
      const sequence = async () => {
        const wal = await openFile(`${file}-wal`, "r");
        try {
          const { buffer } = await wal.read(Buffer.alloc(4), 0, 4, 12);
          return buffer.readUInt32BE(0);
        } finally {
          await wal.close();
        }
      };
      const before = await sequence();
      assert.ok(
        await commitUntil(store, async () => (await sequence()) !== before),
        "a commit started the WAL over",
      );
      assert.equal(
        await sizeOf(`${file}-wal`),
        cycled,
        "the file kept its size, to be written over in place",
      );
    } finally {
      await store.close();
    }
  });

  it("report a file it cannot open as a process warning, and close all the same", async () => {
    const dir = await mkdtemp(join(tmpdir(), "wharf-wal-"));
    dirs.push(dir);
    const warned = new Promise<Error>((resolve) => {
      const onWarning = (warning: Error) => {
        if (warning.name !== "WharfWarning") return;
        process.off("warning", onWarning);
        resolve(warning);
      };
      process.on("warning", onWarning);
    });
    const checkpointer = startWalCheckpointer(join(dir, "missing.db"));
    const warning = await warned;
    assert.match(warning.message, /WAL checkpoint thread of .*missing\.db stopped/);
    await checkpointer.close();
  });
});
