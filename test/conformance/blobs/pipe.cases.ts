import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, get, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { describe, it } from "node:test";
import { BlobNotFoundError, type BlobRange, BlobRangeError } from "../../../src/storage/blobs/blob-driver.js";
import type { BlobFixture } from "./blob-test-backends.js";
import { bytes, readAll, streamOf } from "./blob-test-data.js";

const MiB = 1024 * 1024;
// Large cases use random bytes: `bytes()` repeats every 256 KiB, which would hide a read buffer
// reused too early (its next fill would hold the same bytes).

/** A Writable that keeps a copy of everything written, and whether it was ended. */
function collector(): Writable & { bytes(): Buffer; ended: boolean } {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(Buffer.from(chunk));
      callback();
    },
    final(callback) {
      sink.ended = true;
      callback();
    },
  }) as Writable & { bytes(): Buffer; ended: boolean };
  sink.ended = false;
  sink.bytes = () => Buffer.concat(chunks);
  return sink;
}

/**
 * Serves `key` through `pipeTo` into the HTTP response (the registry's use, and the filesystem
 * driver's buffer-reusing path), fetches it with node:http and returns the body and pipeTo's result.
 */
async function overHttp(
  fx: BlobFixture,
  key: string,
  range?: BlobRange,
  onResponse?: (res: IncomingMessage) => void,
): Promise<{ body: Buffer; piped: Promise<void> }> {
  let piped: Promise<void> | undefined;
  const server = createServer((_req, res: ServerResponse) => {
    res.writeHead(200, { "content-type": "application/octet-stream" });
    piped = fx.driver.pipeTo(key, res, range);
    piped.catch(() => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const body = await new Promise<Buffer>((resolve, reject) => {
      get(`http://127.0.0.1:${port}/`, (res) => {
        if (onResponse) {
          onResponse(res);
          res.on("close", () => resolve(Buffer.alloc(0)));
          return;
        }
        readAll(res).then(resolve, reject);
      }).on("error", reject);
    });
    return { body, piped: piped as Promise<void> };
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/** `pipeTo`: a range of an object written into a Writable, which is then ended. */
export function pipeCases(fx: BlobFixture): void {
  describe("pipeTo", () => {
    const data = bytes(1000, 9);

    it("writes the whole object, or a range of it, and ends the sink", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}p`;
      await d.put(key, streamOf(data));
      for (const [range, expected] of [
        [undefined, data],
        [{ start: 0 }, data],
        [{ start: 10, end: 20 }, data.subarray(10, 20)],
        [{ start: 990, end: 5000 }, data.subarray(990)],
        [{ start: 7, end: 7 }, Buffer.alloc(0)],
        [{ start: 1000 }, Buffer.alloc(0)],
      ] as const) {
        const sink = collector();
        await d.pipeTo(key, sink, range);
        assert.deepEqual(sink.bytes(), expected, `bytes of ${JSON.stringify(range)}`);
        assert.equal(sink.ended, true, `sink ended for ${JSON.stringify(range)}`);
      }
    });

    it("pipes an appendable object", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}uploads/x`;
      await d.append(key, streamOf(data.subarray(0, 400)));
      await d.append(key, streamOf(data.subarray(400)));
      const sink = collector();
      await d.pipeTo(key, sink, { start: 300, end: 700 });
      assert.deepEqual(sink.bytes(), data.subarray(300, 700), "the range across both appends");
    });

    it("rejects a missing key or a start past the end before touching the sink", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}p`;
      await d.put(key, streamOf(data));
      const missing = collector();
      await assert.rejects(d.pipeTo(`${fx.ns()}nothing`, missing), BlobNotFoundError);
      const past = collector();
      await assert.rejects(d.pipeTo(key, past, { start: 1001 }), BlobRangeError);
      for (const sink of [missing, past]) {
        assert.equal(sink.ended, false, "not ended");
        assert.equal(sink.destroyed, false, "not destroyed");
        assert.equal(sink.bytes().length, 0, "nothing written");
      }
      await assert.rejects(d.pipeTo("bad//key", collector()), TypeError);
      await assert.rejects(d.pipeTo(key, collector(), { start: -1 }), RangeError);
    });

    it("leaves an HTTP response unsent for a deleted object, so the server can still answer an error", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}gone`;
      await d.put(key, streamOf(data));
      await d.delete(key);
      let rejection: unknown;
      let headersSent: boolean | undefined;
      const server = createServer((_req, res: ServerResponse) => {
        // The registry's way: headers set, to go out with the first byte.
        res.statusCode = 200;
        res.setHeader("content-length", data.length);
        d.pipeTo(key, res).then(
          () => res.end(),
          (err: unknown) => {
            rejection = err;
            headersSent = res.headersSent;
            res.removeHeader("content-length");
            res.writeHead(404, { "content-type": "text/plain" });
            res.end("gone");
          },
        );
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      try {
        const { port } = server.address() as AddressInfo;
        const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
          get(`http://127.0.0.1:${port}/`, (res) => {
            readAll(res).then(
              (body) => resolve({ status: res.statusCode ?? 0, body: body.toString() }),
              reject,
            );
          }).on("error", reject);
        });
        assert.ok(rejection instanceof BlobNotFoundError, String(rejection));
        assert.equal(headersSent, false, "nothing was sent before the rejection");
        assert.deepEqual(answer, { status: 404, body: "gone" });
      } finally {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });

    it("gives a buffering sink (PassThrough) bytes it may keep", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}big`;
      const big = randomBytes(3 * MiB + 12_345);
      await d.put(key, streamOf(big));
      // Nothing reads the PassThrough until pipeTo is done: reused buffers would show up here.
      const sink = new PassThrough({ highWaterMark: 64 * MiB });
      await d.pipeTo(key, sink);
      assert.equal(sha(await readAll(sink)), sha(big), "same bytes");
    });

    it("serves an HTTP response byte-exactly, whole and ranged, over several read buffers", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}http`;
      const big = randomBytes(5 * MiB + 777);
      await d.put(key, streamOf(big));
      const whole = await overHttp(fx, key);
      await whole.piped;
      assert.equal(sha(whole.body), sha(big), "whole object");
      const [start, end] = [MiB - 3, 4 * MiB + 5];
      const part = await overHttp(fx, key, { start, end });
      await part.piped;
      assert.equal(sha(part.body), sha(big.subarray(start, end)), "range");
    });

    it("settles when the HTTP client goes away mid-transfer (filesystem: rejects)", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}gone`;
      // Larger than what loopback socket buffers hold, so the transfer cannot be over before the client goes.
      await d.put(key, streamOf(Buffer.alloc(48 * MiB, 1)));
      const { piped } = await overHttp(fx, key, undefined, (res) => {
        res.once("data", () => res.destroy());
      });
      if (fx.kind === "filesystem") await assert.rejects(piped, "pipeTo rejects");
      else {
        // pipeline() into an HTTP response resolves when the last chunk was handed over before the
        // client left (the response counts as finished once its socket is gone); either is fine.
        await piped.catch(() => {});
      }
    });

    it("writes into a file stream byte-exactly", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}file`;
      const big = randomBytes(2 * MiB + 5);
      await d.put(key, streamOf(big));
      const dir = await mkdtemp(join(tmpdir(), "wharf-pipe-"));
      try {
        const path = join(dir, "out");
        await d.pipeTo(key, createWriteStream(path));
        assert.equal(sha(await readAll(createReadStream(path))), sha(big), "file bytes");
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
}
