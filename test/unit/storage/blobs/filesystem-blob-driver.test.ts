import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { after, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { BlobNotFoundError } from "../../../../src/storage/blobs/blob-driver.js";
import { createFilesystemBlobDriver } from "../../../../src/storage/blobs/filesystem/filesystem-blob-driver.js";
import { listKeys, streamOf } from "../../../conformance/blobs/blob-test-data.js";

// Filesystem-only guarantees: the on-disk layout, interrupted and killed writes, directory pruning.

const roots: string[] = [];
after(async () => {
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
});

async function newRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "wharf-fs-blobs-"));
  roots.push(root);
  return root;
}

/** The temp files currently in `<root>/_tmp`. */
async function temps(root: string): Promise<string[]> {
  return readdir(join(root, "_tmp")).catch(() => []);
}

/** Polls until `check` holds (the write under test is in flight), failing after ~10 s. */
async function waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (await check()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function tempSize(root: string): Promise<number> {
  const names = await temps(root);
  if (names.length === 0) return 0;
  return (await stat(join(root, "_tmp", names[0]!)).catch(() => ({ size: 0 }))).size;
}

describe("filesystem blob driver", () => {
  it("stores key a/b as the file <root>/a/b and leaves no temp file", async () => {
    const root = await newRoot();
    const d = createFilesystemBlobDriver({ root });
    await d.put("a/b", streamOf("content"));
    assert.equal(await readFile(join(root, "a", "b"), "utf8"), "content");
    assert.deepEqual(await temps(root), []);
    await d.append("uploads/u/data", streamOf("12"));
    await d.append("uploads/u/data", streamOf("34"));
    assert.equal(await readFile(join(root, "uploads", "u", "data"), "utf8"), "1234");
    await d.close();
  });

  it("a put interrupted by its source being destroyed leaves no file at the final path", async () => {
    const root = await newRoot();
    const d = createFilesystemBlobDriver({ root });
    const source = new PassThrough();
    const put = d.put("blobs/x/data", source);
    source.write(Buffer.alloc(1024 * 1024, 1));
    await waitFor("the temp file to fill", async () => (await tempSize(root)) > 0);
    assert.equal(existsSync(join(root, "blobs", "x", "data")), false, "nothing at the final path mid-write");
    assert.equal(await d.stat("blobs/x/data"), undefined);
    source.destroy();
    await assert.rejects(put);
    assert.equal(existsSync(join(root, "blobs", "x", "data")), false);
    assert.deepEqual(await temps(root), [], "temp file removed");
    await d.close();
  });

  it("an interrupted put over an existing object keeps the old object", async () => {
    const root = await newRoot();
    const d = createFilesystemBlobDriver({ root });
    await d.put("k", streamOf("old"));
    const source = new PassThrough();
    const put = d.put("k", source);
    source.write(Buffer.alloc(64 * 1024, 2));
    await waitFor("the temp file to fill", async () => (await tempSize(root)) > 0);
    source.destroy(new Error("client went away"));
    await assert.rejects(put, /client went away/);
    assert.equal(await readFile(join(root, "k"), "utf8"), "old");
    await d.close();
  });

  it("a process killed mid-put leaves only a temp file, which a later sweep removes", async () => {
    const root = await newRoot();
    const driverModule = fileURLToPath(
      new URL("../../../../src/storage/blobs/filesystem/filesystem-blob-driver.ts", import.meta.url),
    );
    const script = `
      import { createFilesystemBlobDriver } from ${JSON.stringify(driverModule)};
      import { Readable } from "node:stream";
      const forever = new Readable({ read() { this.push(Buffer.alloc(256 * 1024, 3)); } });
      await createFilesystemBlobDriver({ root: ${JSON.stringify(root)} }).put("blobs/killed/data", forever);
    `;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      stdio: "ignore",
    });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try {
      await waitFor("the child to write 4 MiB", async () => (await tempSize(root)) > 4 * 1024 * 1024);
    } finally {
      child.kill("SIGKILL");
      await exited;
    }
    assert.equal(existsSync(join(root, "blobs", "killed", "data")), false, "no partial object");
    const orphans = await temps(root);
    assert.equal(orphans.length, 1);

    // A fresh temp is kept by default (it could belong to another live writer) and never listed.
    const d = createFilesystemBlobDriver({ root });
    await d.put("other", streamOf("x"));
    assert.deepEqual(await temps(root), orphans);
    assert.deepEqual(await listKeys(d, ""), ["other"]);
    await assert.rejects(d.read("blobs/killed/data"), BlobNotFoundError);

    // Once stale, the next driver's first write sweeps it.
    const old = new Date(Date.now() - 2 * 24 * 60 * 60 * 1000);
    await utimes(join(root, "_tmp", orphans[0]!), old, old);
    const fresh = createFilesystemBlobDriver({ root });
    await fresh.put("other", streamOf("y"));
    assert.deepEqual(await temps(root), []);
    await d.close();
    await fresh.close();
  });

  it("delete and commit prune directories they leave empty, but not the root or busy ones", async () => {
    const root = await newRoot();
    const d = createFilesystemBlobDriver({ root });
    await d.put("a/b/c/one", streamOf("1"));
    await d.put("a/two", streamOf("2"));
    await d.delete("a/b/c/one");
    assert.equal(existsSync(join(root, "a", "b")), false);
    assert.equal(existsSync(join(root, "a")), true, "a/ still holds two");
    await d.append("uploads/u1/data", streamOf("3"));
    await d.commit("uploads/u1/data", "blobs/x/data");
    assert.equal(existsSync(join(root, "uploads")), false);
    await d.delete("a/two");
    await d.delete("blobs/x/data");
    assert.deepEqual((await readdir(root)).sort(), ["_tmp"]);
    await d.put("a/b/c/again", streamOf("4"));
    assert.equal(await readFile(join(root, "a", "b", "c", "again"), "utf8"), "4");
    await d.close();
  });

  it("list skips files whose names are not valid keys", async () => {
    const root = await newRoot();
    const d = createFilesystemBlobDriver({ root });
    await d.put("good/key", streamOf("1"));
    await mkdir(join(root, "lost+found"));
    await writeFile(join(root, "lost+found", "x"), "x");
    await writeFile(join(root, "good", "bad name"), "x");
    assert.deepEqual(await listKeys(d, ""), ["good/key"]);
    await d.close();
  });

  it("appends past the background flush interval byte-exactly, and undoes a chunk failing after a flush", async () => {
    const root = await newRoot();
    const d = createFilesystemBlobDriver({ root });
    const MiB = 1024 * 1024;
    const first = randomBytes(3 * MiB);
    assert.equal(await d.append("uploads/big", streamOf(first)), first.length);
    // 70 MiB in 64 KiB chunks: background flushes start every few MiB while writes go on.
    const piece = randomBytes(64 * 1024);
    const chunks = Array.from({ length: 70 * 16 }, () => piece);
    const size = first.length + 70 * MiB;
    assert.equal(await d.append("uploads/big", Readable.from(chunks)), size);
    const hash = createHash("sha256").update(first);
    for (const chunk of chunks) hash.update(chunk);
    const stored = createHash("sha256").update(await readFile(join(root, "uploads", "big")));
    assert.equal(stored.digest("hex"), hash.digest("hex"), "the file holds every byte in order");
    // A source failing after the flush point: the file goes back to its previous size.
    async function* failing() {
      for (let i = 0; i < 66 * 16; i++) yield piece;
      throw new Error("source failed on purpose");
    }
    await assert.rejects(d.append("uploads/big", Readable.from(failing())), /on purpose/);
    assert.equal((await stat(join(root, "uploads", "big"))).size, size, "the failed chunk was cut off");
    await d.close();
  });
});
