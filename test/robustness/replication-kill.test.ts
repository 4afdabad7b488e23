import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Transform } from "node:stream";
import { after, before, describe, it } from "node:test";
import { type Distribution, distributionSkip, startDistribution } from "../support/distribution.js";
import { writeImageLayout } from "../support/oci-layout.js";
import { runSkopeo, skopeoSkip } from "../support/skopeo.js";
import {
  adminTokenOf,
  createVia,
  freeLoopbackPort,
  serveProcess,
  stopProcess,
  type WharfProcess,
} from "../support/wharf-process.js";

// Replication is resumable after a kill (ADR 0054): a `wharf serve` killed (SIGKILL) in the middle of
// a run leaves the run RUNNING with a lease; after a restart the run is taken over once the lease
// ended and started again, and the copier skips the blobs the remote already has, so no blob whose
// upload completed before the kill is sent again. The remote is docker-registry behind a proxy that
// slows blob uploads and counts the completed ones.

/** Upload bytes per second the proxy lets through (a 1 MiB layer takes about half a second). */
const UPLOAD_RATE = 2 * 1024 * 1024;
const LAYERS = 6;
const LAYER_BYTES = 1024 * 1024;

/** Passes bytes on at most `rate` per second. */
function throttle(rate: number): Transform {
  let start = 0;
  let sent = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      if (start === 0) start = Date.now();
      sent += chunk.length;
      const due = start + (sent / rate) * 1000;
      setTimeout(() => done(null, chunk), Math.max(0, due - Date.now()));
    },
  });
}

/** The completed blob uploads the proxy saw: a PUT of an upload with `digest=` answered 201. */
interface CountingProxy {
  url: string;
  completed: string[];
  close(): Promise<void>;
}

async function countingProxy(target: string): Promise<CountingProxy> {
  const to = new URL(target);
  const completed: string[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    let bodyDone = false;
    const upstream = request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        // Counted even when the client is gone: a body that arrived whole may still complete.
        const url = new URL(req.url ?? "/", "http://proxy");
        const digest = url.searchParams.get("digest");
        if (
          req.method === "PUT" &&
          url.pathname.includes("/blobs/uploads/") &&
          digest &&
          answer.statusCode === 201
        ) {
          completed.push(digest);
        }
        if (res.destroyed) {
          answer.resume();
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.on("end", () => {
      bodyDone = true;
    });
    // A client killed mid-body: the upload is cut short upstream too.
    req.on("close", () => {
      if (!bodyDone) upstream.destroy();
    });
    if (req.method === "PUT" || req.method === "PATCH") req.pipe(throttle(UPLOAD_RATE)).pipe(upstream);
    else req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    completed,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("replication killed mid-run (kill -9) finishes after a restart without re-sending", {
  skip: skopeoSkip || distributionSkip,
}, () => {
  let remote: Distribution;
  let proxy: CountingProxy;
  let dataDir: string;
  let work: string;
  let wharf: WharfProcess | undefined;
  const env = {
    WHARF_EVENTS_ALLOW_LOOPBACK: "true",
    WHARF_EVENTS_ALLOW_HTTP: "true",
    WHARF_REPLICATION_LEASE: "3s",
  };

  before(async () => {
    remote = await startDistribution();
    proxy = await countingProxy(remote.url);
    dataDir = await mkdtemp(join(tmpdir(), "wharf-replication-kill-"));
    work = await mkdtemp(join(tmpdir(), "wharf-replication-kill-src-"));
  });
  after(async () => {
    if (wharf) await stopProcess(wharf, "SIGKILL");
    await proxy?.close();
    await remote?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("takes the run over after the lease and sends only what the remote lacks", async () => {
    const addrs = {
      apiAddr: `127.0.0.1:${await freeLoopbackPort()}`,
      registryAddr: `127.0.0.1:${await freeLoopbackPort()}`,
    };
    wharf = await serveProcess(dataDir, env, addrs);
    const token = await adminTokenOf(dataDir, wharf.apiUrl);
    const registryToken = await adminTokenOf(dataDir, wharf.apiUrl, { audience: wharf.registryUrl });
    const org = await createVia(wharf.apiUrl, token, "/iam/v2/groups", { name: "acme" });

    const files: Record<string, Buffer> = {};
    for (let i = 0; i < LAYERS; i++) files[`data/${i}.bin`] = randomBytes(LAYER_BYTES);
    const image = await writeImageLayout(join(work, "layout"), { tag: "v1", files, layers: LAYERS });
    const push = await runSkopeo([
      "copy",
      "--dest-tls-verify=false",
      "--dest-creds",
      `_token:${registryToken}`,
      `oci:${join(work, "layout")}:v1`,
      `docker://${new URL(wharf.registryUrl).host}/acme/app:v1`,
    ]);
    assert.equal(push.code, 0, push.stderr);

    const rule = await createVia(wharf.apiUrl, token, `/registry/v2/replicationRules/${org}`, {
      name: "slow-remote",
      direction: "PUSH",
      trigger: "MANUAL",
      remote: { url: proxy.url },
      destination: "mirror",
      enabled: true,
    });
    const run = await createVia(wharf.apiUrl, token, `/registry/v2/replicationRules/${rule}:run`, {});

    // Kill once some blobs made it and others have not.
    await until("two completed blob uploads", async () => (proxy.completed.length >= 2 ? true : undefined));
    await stopProcess(wharf, "SIGKILL");
    const sentBeforeKill = [...proxy.completed];
    assert.ok(sentBeforeKill.length < LAYERS + 1, "killed before every blob was sent");

    wharf = await serveProcess(dataDir, env, addrs);
    const token2 = await adminTokenOf(dataDir, wharf.apiUrl);
    const finished = await until("the run to end after the restart", async () => {
      const res = await fetch(`${wharf?.apiUrl}/registry/v2/replicationRuns/${run}`, {
        headers: { authorization: `Bearer ${token2}` },
      });
      const body = (await res.json()) as {
        state: string;
        skippedBlobs?: string;
        copiedBlobs?: string;
        errors?: unknown;
      };
      return body.state === "SUCCEEDED" || body.state === "FAILED" ? body : undefined;
    });
    assert.equal(finished.state, "SUCCEEDED", JSON.stringify(finished.errors));

    const blobs = [image.configDigest, ...image.layerDigests];
    const counts = new Map<string, number>();
    for (const d of proxy.completed) counts.set(d, (counts.get(d) ?? 0) + 1);
    for (const d of blobs) assert.equal(counts.get(d), 1, `blob ${d} uploaded exactly once`);
    assert.ok(
      Number(finished.skippedBlobs ?? "0") >= sentBeforeKill.length,
      "the restarted run skipped what the remote had",
    );
    const head = await fetch(`${remote.url}/v2/mirror/app/manifests/v1`, {
      method: "HEAD",
      headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
    });
    assert.equal(head.headers.get("docker-content-digest"), image.manifestDigest);
  });
});
