// The bare node:http baselines of `bench:registry`, in their own process. Usage: bare-http <dir>.
//
// - Any GET outside /v2/ answers the same ~500-byte JSON body (the manifest GET baseline), except
//   `GET /loopback/<bytes>`: that many bytes sent from one buffer, again and again, with no file
//   read at all: what curl receives over loopback here when the server does nothing else, the
//   reference for the pull figures (a sendfile server, which skips one copy, was no faster here).
// - A minimal blob upload/download over the same distribution-API requests the benchmark's client
//   sends (POST → 202 Location; PATCH appends; PUT ?digest= finishes; GET /v2/…/blobs/<digest>),
//   done the plain Node way: request → Transform feeding sha256 → file write stream, fsync, rename;
//   a download is createReadStream → response. No auth, no metadata, no validation beyond the
//   digest: what Node itself costs for the same transfer, the floor under Wharf's own overhead.
//
// Prints {"pid", "url", "bytes"} on stdout once listening. Stops on SIGTERM/SIGINT or when stdin
// closes.
import { createHash, type Hash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { open, rename } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { stopWhenAsked } from "./stop-when-asked.js";

const [dir] = process.argv.slice(2);
if (!dir) throw new Error("usage: bare-http <dir>");

const body = JSON.stringify({
  schemaVersion: 2,
  mediaType: "application/vnd.oci.image.manifest.v1+json",
  config: {
    mediaType: "application/vnd.oci.image.config.v1+json",
    digest: `sha256:${"a".repeat(64)}`,
    size: 233,
  },
  layers: [
    {
      mediaType: "application/vnd.oci.image.layer.v1.tar",
      digest: `sha256:${"b".repeat(64)}`,
      size: 1024,
    },
  ],
  annotations: { "org.opencontainers.image.title": "bench" },
});

interface Upload {
  path: string;
  hash: Hash;
  size: number;
}
const uploads = new Map<string, Upload>();
let nextId = 0;

/** Appends the request body to the upload's file through the hash, then fsyncs (as the registries do). */
async function append(upload: Upload, req: IncomingMessage): Promise<void> {
  const handle = await open(upload.path, "a");
  try {
    const tap = new Transform({
      highWaterMark: 1 << 20,
      transform(chunk: Buffer, _encoding, callback) {
        upload.hash.update(chunk);
        upload.size += chunk.length;
        callback(null, chunk);
      },
    });
    const sink = createWriteStream(upload.path, { fd: handle.fd, autoClose: false, highWaterMark: 1 << 20 });
    await pipeline(req, tap, sink);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function reply(res: ServerResponse, status: number, headers: Record<string, string | number> = {}): void {
  res.writeHead(status, { "content-length": 0, ...headers });
  res.end();
}

/** Bytes of the buffer `GET /loopback/<bytes>` sends again and again, and writes kept in flight. */
const LOOPBACK_BUFFER = 1 << 20;
const LOOPBACK_IN_FLIGHT = 2;

/** Sends `bytes` bytes from one buffer that never changes (so it may be queued twice), as Wharf sends files. */
async function sendLoopback(res: ServerResponse, bytes: number): Promise<void> {
  const buffer = Buffer.alloc(LOOPBACK_BUFFER, 0x5a);
  res.writeHead(200, { "content-type": "application/octet-stream", "content-length": bytes });
  const inFlight: Promise<void>[] = [];
  for (let sent = 0; sent < bytes; ) {
    const n = Math.min(buffer.length, bytes - sent);
    sent += n;
    const chunk = n === buffer.length ? buffer : buffer.subarray(0, n);
    const written = new Promise<void>((resolve, reject) =>
      res.write(chunk, (err) => (err ? reject(err) : resolve())),
    );
    // A failed write not awaited yet must not be an unhandled rejection; the await below sees it.
    written.catch(() => {});
    inFlight.push(written);
    if (inFlight.length >= LOOPBACK_IN_FLIGHT) await inFlight.shift();
  }
  await Promise.all(inFlight);
  res.end();
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://bare.invalid");
  const loopback = /^\/loopback\/(\d+)$/.exec(url.pathname);
  if (loopback && req.method === "GET") return sendLoopback(res, Number(loopback[1]));
  if (!url.pathname.startsWith("/v2/")) {
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  const upload = /^\/v2\/(.+)\/blobs\/uploads\/(\d*)$/.exec(url.pathname);
  if (upload && req.method === "POST") {
    req.resume();
    const id = String(nextId++);
    uploads.set(id, { path: join(dir as string, `upload-${id}`), hash: createHash("sha256"), size: 0 });
    reply(res, 202, { location: `/v2/${upload[1]}/blobs/uploads/${id}`, range: "0-0" });
    return;
  }
  const state = upload ? uploads.get(upload[2] as string) : undefined;
  if (upload && state && req.method === "PATCH") {
    await append(state, req);
    reply(res, 202, { location: url.pathname, range: `0-${state.size - 1}` });
    return;
  }
  if (upload && state && req.method === "PUT") {
    if (Number(req.headers["content-length"] ?? 0) > 0) await append(state, req);
    else req.resume();
    uploads.delete(upload[2] as string);
    const digest = `sha256:${state.hash.digest("hex")}`;
    if (digest !== url.searchParams.get("digest")) return reply(res, 400);
    await rename(state.path, join(dir as string, digest.slice("sha256:".length)));
    reply(res, 201, { location: `/v2/${upload[1]}/blobs/${digest}`, "docker-content-digest": digest });
    return;
  }
  const blob = /^\/v2\/.+\/blobs\/sha256:([a-f0-9]{64})$/.exec(url.pathname);
  if (blob && req.method === "GET") {
    const file = await open(join(dir as string, blob[1] as string), "r");
    const { size } = await file.stat();
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": size });
    await pipeline(file.createReadStream({ highWaterMark: 1 << 20 }), res);
    return;
  }
  req.resume();
  reply(res, 404);
}

const server = createServer({ requestTimeout: 0 }, (req, res) => {
  handle(req, res).catch((err) => {
    console.error(err);
    res.destroy();
  });
});
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(
    `${JSON.stringify({ pid: process.pid, url: `http://127.0.0.1:${port}/`, bytes: body.length })}\n`,
  );
});
const stop = () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
};
stopWhenAsked(stop);
