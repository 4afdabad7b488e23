// This machine's limits for `bench:registry`, measured on the benchmark's own file in the same run:
// Node crypto sha256 over the file, dd write rate with fdatasync, warm `cat` read rate.
import { execFile, spawn } from "node:child_process";
import { createHash, randomFillSync } from "node:crypto";
import { createReadStream } from "node:fs";
import { open, readFile, rm } from "node:fs/promises";
import { promisify } from "node:util";

const run = promisify(execFile);
const MiB = 1024 * 1024;

/** Writes `size` random bytes to `path`, 16 MiB at a time, and fsyncs it. */
export async function writeRandomFile(path: string, size: number): Promise<void> {
  const handle = await open(path, "wx");
  try {
    const buffer = Buffer.allocUnsafe(16 * MiB);
    for (let written = 0; written < size; ) {
      const n = Math.min(buffer.length, size - written);
      randomFillSync(buffer, 0, n);
      let offset = 0;
      while (offset < n) offset += (await handle.write(buffer, offset, n - offset)).bytesWritten;
      written += n;
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** sha256 of the file with Node crypto (read with 16 MiB buffers); `seconds` is the whole pass. */
export async function sha256File(path: string): Promise<{ digest: string; seconds: number }> {
  const started = performance.now();
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path, { highWaterMark: 16 * MiB })) hash.update(chunk as Buffer);
  const digest = `sha256:${hash.digest("hex")}`;
  return { digest, seconds: (performance.now() - started) / 1000 };
}

/**
 * `dd if=/dev/zero of=<path> bs=16M count=<n> conv=fdatasync`; returns bytes and dd's own elapsed
 * seconds (which include the final fdatasync). The file is removed afterwards.
 */
export async function ddWrite(path: string, size: number): Promise<{ bytes: number; seconds: number }> {
  const count = Math.max(1, Math.ceil(size / (16 * MiB)));
  try {
    const { stderr } = await run(
      "dd",
      ["if=/dev/zero", `of=${path}`, "bs=16M", `count=${count}`, "conv=fdatasync"],
      {
        env: { ...process.env, LC_ALL: "C" },
      },
    );
    const m = /^(\d+) bytes .* copied, ([\d.]+) s/m.exec(stderr);
    if (!m) throw new Error(`cannot parse dd output: ${stderr}`);
    return { bytes: Number(m[1]), seconds: Number(m[2]) };
  } finally {
    await rm(path, { force: true });
  }
}

function catOnce(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn("cat", [path], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code === 0) resolve((performance.now() - started) / 1000);
      else reject(new Error(`cat exited ${code}: ${stderr}`));
    });
  });
}

/** `cat file > /dev/null`, once to warm the page cache, then timed. */
export async function catWarm(path: string): Promise<number> {
  await catOnce(path);
  return catOnce(path);
}

/** Flushes dirty pages so one measurement's writeback does not land in the next. */
export async function sync(): Promise<void> {
  await run("sync", []);
}

/**
 * Whether this (virtual) machine hands free memory back to its host (Linux free page reporting,
 * virtio-balloon): then writing new data into the page cache runs at the host's page-fault speed
 * (~300 MB/s measured here, against 2.5–3.6 GB/s into memory the guest kept) whenever the pages it
 * gets were reported, which depends on how long ago they were freed. Undefined when it cannot tell.
 */
export async function freePageReporting(): Promise<string | undefined> {
  try {
    const order = (
      await readFile("/sys/module/page_reporting/parameters/page_reporting_order", "utf8")
    ).trim();
    return `on (free blocks of order ≥ ${order} go back to the host)`;
  } catch {
    return undefined;
  }
}
