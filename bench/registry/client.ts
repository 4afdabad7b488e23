// The streaming registry client of `bench:registry`: node:http (not fetch), the blob read from disk
// with a large highWaterMark, the same request flow for every registry.
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { Agent, type IncomingHttpHeaders, request } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";

const run = promisify(execFile);

/** File read buffer for uploads: few, large writes to the socket. */
const READ_CHUNK = 4 * 1024 * 1024;

/** One registry under test: its base URL and the headers sent on every request (authorization). */
export interface Registry {
  name: string;
  base: string;
  headers: Record<string, string>;
  agent: Agent;
}

export function registry(name: string, base: string, headers: Record<string, string> = {}): Registry {
  return { name, base, headers, agent: new Agent({ keepAlive: true, maxSockets: 4 }) };
}

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One request; `body` is a Buffer or a stream (then `content-length` must be in `headers`). */
export function send(
  reg: Registry,
  method: string,
  url: string | URL,
  headers: Record<string, string | number> = {},
  body?: Buffer | Readable,
): Promise<Reply> {
  const target = new URL(url, reg.base);
  return new Promise<Reply>((resolve, reject) => {
    const req = request(
      target,
      {
        method,
        agent: reg.agent,
        headers: {
          ...reg.headers,
          ...(body instanceof Buffer ? { "content-length": body.length } : {}),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on("error", reject);
    if (body instanceof Readable) pipeline(body, req).catch(reject);
    else req.end(body);
  });
}

/** `send`, throwing unless the status is `expected`. */
export async function expect(
  reg: Registry,
  expected: number,
  method: string,
  url: string | URL,
  headers: Record<string, string | number> = {},
  body?: Buffer | Readable,
): Promise<Reply> {
  const reply = await send(reg, method, url, headers, body);
  if (reply.status !== expected) {
    throw new Error(
      `${reg.name}: ${method} ${new URL(url, reg.base).pathname} answered ${reply.status} (expected ${expected}): ${reply.body.toString("utf8").slice(0, 500)}`,
    );
  }
  return reply;
}

function locationOf(reg: Registry, reply: Reply): URL {
  const location = reply.headers.location;
  if (!location) throw new Error(`${reg.name}: upload answer without Location`);
  return new URL(location, reg.base);
}

function withDigest(location: URL, digest: string): URL {
  const url = new URL(location);
  url.searchParams.set("digest", digest);
  return url;
}

const fileSlice = (file: string, start: number, end: number) =>
  createReadStream(file, { start, end: end - 1, highWaterMark: READ_CHUNK });

/** POST a session, then PUT the whole file with `?digest=` (201). */
export async function pushMonolithic(
  reg: Registry,
  repo: string,
  file: string,
  size: number,
  digest: string,
): Promise<void> {
  const started = await expect(reg, 202, "POST", `/v2/${repo}/blobs/uploads/`, { "content-length": 0 });
  await expect(
    reg,
    201,
    "PUT",
    withDigest(locationOf(reg, started), digest),
    { "content-type": "application/octet-stream", "content-length": size },
    size > 0 ? fileSlice(file, 0, size) : Buffer.alloc(0),
  );
}

/** POST a session, PATCH `chunk`-byte pieces with Content-Range, then PUT `?digest=` without a body. */
export async function pushChunked(
  reg: Registry,
  repo: string,
  file: string,
  size: number,
  digest: string,
  chunk: number,
): Promise<number> {
  let reply = await expect(reg, 202, "POST", `/v2/${repo}/blobs/uploads/`, { "content-length": 0 });
  let patches = 0;
  for (let start = 0; start < size; start += chunk) {
    const end = Math.min(start + chunk, size);
    reply = await expect(
      reg,
      202,
      "PATCH",
      locationOf(reg, reply),
      {
        "content-type": "application/octet-stream",
        "content-range": `${start}-${end - 1}`,
        "content-length": end - start,
      },
      fileSlice(file, start, end),
    );
    patches++;
  }
  await expect(reg, 201, "PUT", withDigest(locationOf(reg, reply), digest), { "content-length": 0 });
  return patches;
}

/** A small blob in one POST + PUT; returns its digest. */
export async function pushSmallBlob(reg: Registry, repo: string, bytes: Buffer, digest: string) {
  const started = await expect(reg, 202, "POST", `/v2/${repo}/blobs/uploads/`, { "content-length": 0 });
  await expect(
    reg,
    201,
    "PUT",
    withDigest(locationOf(reg, started), digest),
    { "content-type": "application/octet-stream" },
    bytes,
  );
}

/** The media type of an OCI image manifest. */
export const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";

const sha256Of = (bytes: Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

/**
 * Pushes a one-layer linux/amd64 OCI image (a random layer of `layerBytes`) to `repo`, tagged
 * `latest`; returns the manifest's bytes and digest.
 */
export async function pushSmallImage(
  reg: Registry,
  repo: string,
  layerBytes: number,
): Promise<{ manifest: Buffer; digest: string }> {
  const layer = randomBytes(layerBytes);
  const config = Buffer.from(
    JSON.stringify({
      architecture: "amd64",
      os: "linux",
      rootfs: { type: "layers", diff_ids: [sha256Of(layer)] },
      config: {},
    }),
  );
  await pushSmallBlob(reg, repo, config, sha256Of(config));
  await pushSmallBlob(reg, repo, layer, sha256Of(layer));
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: {
        mediaType: "application/vnd.oci.image.config.v1+json",
        digest: sha256Of(config),
        size: config.length,
      },
      layers: [
        { mediaType: "application/vnd.oci.image.layer.v1.tar", digest: sha256Of(layer), size: layer.length },
      ],
    }),
  );
  await expect(reg, 201, "PUT", `/v2/${repo}/manifests/latest`, { "content-type": OCI_MANIFEST }, manifest);
  return { manifest, digest: sha256Of(manifest) };
}

/**
 * GETs `path` of `reg` with `curl -o /dev/null` and returns how many bytes arrived (throws unless
 * 200). The pull figure's client: this client's node:http reads the socket 64 KiB at a time and
 * allocates a buffer for each, which caps it near 0.5–0.7 GB/s here, below what the servers send.
 */
export async function curlDownload(reg: Registry, path: string): Promise<number> {
  const target = new URL(path, reg.base);
  const headers = Object.entries(reg.headers).flatMap(([k, v]) => ["-H", `${k}: ${v}`]);
  const { stdout } = await run("curl", [
    "-sS",
    "-o",
    "/dev/null",
    "-w",
    "%{http_code} %{size_download}",
    ...headers,
    target.href,
  ]);
  const [status, size] = stdout.trim().split(" ");
  if (status !== "200") throw new Error(`${reg.name}: GET ${target.pathname} answered ${status} (curl)`);
  return Number(size);
}

/** GETs a blob with `curl -o /dev/null` ({@link curlDownload}); returns how many bytes arrived. */
export function pullBlobCurl(reg: Registry, repo: string, digest: string): Promise<number> {
  return curlDownload(reg, `/v2/${repo}/blobs/${digest}`);
}

/** GETs a blob with this node:http client and discards its bytes; returns how many arrived. */
export function pullBlob(reg: Registry, repo: string, digest: string): Promise<number> {
  const target = new URL(`/v2/${repo}/blobs/${digest}`, reg.base);
  return new Promise<number>((resolve, reject) => {
    const req = request(target, { method: "GET", agent: reg.agent, headers: reg.headers }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`${reg.name}: GET blob answered ${res.statusCode}`));
        return;
      }
      let received = 0;
      res.on("data", (chunk: Buffer) => {
        received += chunk.length;
      });
      res.on("error", reject);
      res.on("end", () => resolve(received));
    });
    req.on("error", reject);
    req.end();
  });
}
