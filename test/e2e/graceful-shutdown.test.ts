import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { type ClientRequest, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  adminTokenOf,
  freeLoopbackPort,
  serveProcess,
  stopProcess,
  type WharfProcess,
} from "../support/wharf-process.js";

// `wharf serve` on SIGTERM (ADR 0035): /readyz 503 at once while everything else serves through
// --shutdown-delay, then the listeners stop accepting, in-flight requests finish until
// --shutdown-timeout, and the process exits 0. Real processes, the shipped bin/wharf.js.

const MiB = 1024 * 1024;

/** Resolves with the exit code once `server` exited. */
function exitOf(server: WharfProcess): Promise<number | null> {
  if (server.child.exitCode !== null) return Promise.resolve(server.child.exitCode);
  return new Promise((resolve) => server.child.once("exit", (code) => resolve(code)));
}

/**
 * Waits until `check` holds (polled every 10 ms), failing after `ms`. With `server`, the failure
 * says whether the process still runs and what it printed last.
 */
async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  server?: WharfProcess,
  ms = 20_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() >= deadline) {
      const state = server
        ? ` (exit code ${server.child.exitCode}, signal ${server.child.signalCode}; last output: ${server.output().slice(-1500)})`
        : "";
      assert.fail(`timed out waiting: ${what}${state}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The JSON log lines the server printed whose `msg` is `msg`. */
function logged(server: WharfProcess, msg: string): Record<string, unknown>[] {
  return server
    .output()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === msg);
}

/** An upload in flight: POST `?digest=` with a declared length, written by the test as it pleases. */
interface StreamingUpload {
  req: ClientRequest;
  /** Writes `bytes`, resolving once the socket took them. */
  write(bytes: Buffer): Promise<void>;
  /** The status once answered, or the error when the connection is cut. */
  outcome: Promise<{ status: number } | { error: string; at: number }>;
}

function startUpload(url: string, token: string, length: number, digest: string): StreamingUpload {
  const req = request(`${url}/v2/acme/app/blobs/uploads/?digest=${digest}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-length": length },
  });
  const outcome = new Promise<{ status: number } | { error: string; at: number }>((resolve) => {
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0 }));
    });
    req.on("error", (err) => resolve({ error: err.message, at: Date.now() }));
  });
  const write = (bytes: Buffer) =>
    new Promise<void>((resolve, reject) => req.write(bytes, (err) => (err ? reject(err) : resolve())));
  return { req, write, outcome };
}

describe("wharf serve shuts down gracefully on SIGTERM", () => {
  let dataDir: string;
  let addrs: { apiAddr: string; registryAddr: string };
  let apiToken: string;
  let registryToken: string;
  const started: WharfProcess[] = [];
  const serve = async (env: Record<string, string>) => {
    const server = await serveProcess(dataDir, env, addrs);
    started.push(server);
    return server;
  };

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "wharf-shutdown-"));
    // Fixed ports: the restarted servers keep the URLs the tokens are signed for.
    addrs = {
      apiAddr: `127.0.0.1:${await freeLoopbackPort()}`,
      registryAddr: `127.0.0.1:${await freeLoopbackPort()}`,
    };
    const server = await serve({});
    apiToken = await adminTokenOf(dataDir, server.apiUrl);
    registryToken = await adminTokenOf(dataDir, server.apiUrl, { audience: "registry" });
    const res = await fetch(`${server.apiUrl}/iam/v2/groups`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "acme" }),
    });
    assert.equal(res.status, 200, await res.text());
    await stopProcess(server);
  });
  after(async () => {
    for (const server of started) await stopProcess(server, "SIGKILL");
    await rm(dataDir, { recursive: true, force: true });
  });

  it("/readyz answers 503 at once on both ports while other requests still answer 200, then exits 0", async () => {
    const server = await serve({ WHARF_SHUTDOWN_DELAY: "2s" });
    for (const url of [server.apiUrl, server.registryUrl])
      assert.equal((await fetch(`${url}/readyz`)).status, 200, "ready before the signal");
    const exited = exitOf(server);
    server.child.kill("SIGTERM");
    await until("shutdown started", () => logged(server, "shutdown started").length === 1, server);
    for (const url of [server.apiUrl, server.registryUrl]) {
      const ready = await fetch(`${url}/readyz`);
      assert.equal(ready.status, 503, url);
      assert.deepEqual(await ready.json(), { status: "shutting down" });
      assert.equal((await fetch(`${url}/healthz`)).status, 200, `${url}/healthz still answers`);
    }
    const v2 = await fetch(`${server.registryUrl}/v2/`, {
      headers: { authorization: `Bearer ${registryToken}` },
    });
    assert.equal(v2.status, 200, "the registry still serves during the delay");
    const groups = await fetch(`${server.apiUrl}/iam/v2/groups`, {
      headers: { authorization: `Bearer ${apiToken}` },
    });
    assert.equal(groups.status, 200, "the API still serves during the delay");
    assert.equal(logged(server, "listeners closing").length, 0, "the listeners wait for the delay");

    assert.equal(await exited, 0);
    const [start] = logged(server, "shutdown started");
    assert.equal(start?.signal, "SIGTERM");
    assert.equal(start?.delayMs, 2000);
    assert.equal(start?.timeoutMs, 30_000, "the default timeout");
    assert.equal(logged(server, "listeners closed").length, 1);
    assert.equal(logged(server, "stopped").length, 1);
  });

  it("a second signal skips the delay (logged) and the process still exits 0", async () => {
    const server = await serve({ WHARF_SHUTDOWN_DELAY: "60s", WHARF_SHUTDOWN_TIMEOUT: "90s" });
    const exited = exitOf(server);
    const signalled = Date.now();
    server.child.kill("SIGTERM");
    await until("shutdown started", () => logged(server, "shutdown started").length === 1, server);
    assert.equal((await fetch(`${server.registryUrl}/readyz`)).status, 503);
    server.child.kill("SIGINT");
    assert.equal(await exited, 0);
    assert.ok(Date.now() - signalled < 20_000, "it did not wait out the 60 s delay");
    assert.equal(logged(server, "second signal: skipping the shutdown delay").length, 1);
    assert.equal(logged(server, "stopped").length, 1);
  });

  it("a 200 MiB upload in flight at SIGTERM completes after the listeners closed; the blob pulls intact", async () => {
    const blob = Buffer.alloc(200 * MiB);
    for (let i = 0; i < blob.length; i += 4096) blob.writeUInt32BE(i, i);
    const digest = `sha256:${createHash("sha256").update(blob).digest("hex")}`;
    const server = await serve({ WHARF_SHUTDOWN_DELAY: "1s" });
    const exited = exitOf(server);
    const upload = startUpload(server.registryUrl, registryToken, blob.length, digest);
    await upload.write(blob.subarray(0, 100 * MiB));
    server.child.kill("SIGTERM");
    // The upload holds still until the listeners stop accepting: it is in flight across the close.
    await until("listeners closing", () => logged(server, "listeners closing").length === 1, server);
    const refused = await fetch(`${server.registryUrl}/readyz`).then(
      () => "answered",
      () => "refused",
    );
    assert.equal(refused, "refused", "a new connection is refused once the listeners closed");
    await upload.write(blob.subarray(100 * MiB));
    upload.req.end();
    assert.deepEqual(await upload.outcome, { status: 201 }, "the upload in flight completed");
    assert.equal(await exited, 0);
    assert.equal(logged(server, "stopped").length, 1);

    const again = await serve({});
    const got = await fetch(`${again.registryUrl}/v2/acme/app/blobs/${digest}`, {
      headers: { authorization: `Bearer ${registryToken}` },
    });
    assert.equal(got.status, 200);
    const bytes = Buffer.from(await got.arrayBuffer());
    assert.equal(bytes.length, blob.length);
    assert.equal(
      `sha256:${createHash("sha256").update(bytes).digest("hex")}`,
      digest,
      "the bytes pulled back",
    );
    await stopProcess(again);
  });

  it("a request still running at --shutdown-timeout is cut, and the process exits 0 promptly", async () => {
    const server = await serve({ WHARF_SHUTDOWN_DELAY: "0", WHARF_SHUTDOWN_TIMEOUT: "1500ms" });
    const exited = exitOf(server);
    const digest = `sha256:${"0".repeat(64)}`;
    const upload = startUpload(server.registryUrl, registryToken, 64 * MiB, digest);
    await upload.write(Buffer.alloc(MiB));
    const signalled = Date.now();
    server.child.kill("SIGTERM");
    const outcome = await upload.outcome;
    assert.ok("error" in outcome, `the stalled upload was cut, not answered: ${JSON.stringify(outcome)}`);
    assert.ok(
      outcome.at - signalled >= 1400,
      `cut at the timeout, not before (${outcome.at - signalled} ms)`,
    );
    assert.equal(await exited, 0);
    const took = Date.now() - signalled;
    assert.ok(took < 6_000, `exited promptly after the timeout (${took} ms)`);
    assert.equal(logged(server, "stopped").length, 1);
  });
});
