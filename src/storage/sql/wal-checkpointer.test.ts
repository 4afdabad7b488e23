import assert from "node:assert/strict";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { newRootUid } from "../../core/uidp.js";
import type { Store } from "../store.js";
import { type OpenStoreOptions, openStore } from "./open-store.js";
import { CHECKPOINT_INTERVAL_MS, startWalCheckpointer, WAL_SIZE_LIMIT_BYTES } from "./wal-checkpointer.js";

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
      const before = await sizeOf(withThread.file);
      assert.equal(await sizeOf(withoutThread.file), before, "both files start from the same migrations");
      await write(withThread.store, 6);
      await write(withoutThread.store, 6);
      assert.ok(
        await fileReaches(withThread.file, before + 5 * MiB, 5000),
        "the checkpoint thread copied the WAL into the database file",
      );
      await sleep(CHECKPOINT_INTERVAL_MS * 5);
      assert.ok(
        (await sizeOf(withoutThread.file)) < before + MiB,
        "without the thread, commits below the backstop leave the pages in the WAL",
      );
    } finally {
      await withThread.store.close();
      await withoutThread.store.close();
    }
  });

  it("keep the WAL file within its limit by letting commits start it over", async () => {
    const withThread = await open("own-thread");
    const withoutThread = await open("other-thread");
    try {
      const start = await sizeOf(withThread.file);
      await write(withThread.store, 6);
      await write(withoutThread.store, 6);
      const frames = await sizeOf(`${withoutThread.file}-wal`);
      assert.ok(frames > WAL_SIZE_LIMIT_BYTES, `never started over, the WAL holds ${frames} bytes`);
      // A commit after a complete checkpoint starts the WAL over, cutting a larger file back. A few
      // small commits, far from the backstop, in case one lands while a checkpoint still runs.
      assert.ok(await fileReaches(withThread.file, start + 5 * MiB, 5000), "the batch was checkpointed");
      let size = await sizeOf(`${withThread.file}-wal`);
      for (let attempt = 0; attempt < 5 && size > WAL_SIZE_LIMIT_BYTES; attempt++) {
        await sleep(CHECKPOINT_INTERVAL_MS * 2);
        await write(withThread.store, 0.001);
        size = await sizeOf(`${withThread.file}-wal`);
      }
      assert.ok(size <= WAL_SIZE_LIMIT_BYTES, `the WAL started over: ${size} bytes, not ${frames}`);
    } finally {
      await withThread.store.close();
      await withoutThread.store.close();
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
