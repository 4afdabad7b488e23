import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { request } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";

// A server killed (SIGKILL) in the middle of an upload leaves no visible partial blob, and the
// registry works normally after a restart on the same data.

const run = promisify(execFile);
const WHARF = new URL("../../bin/wharf.js", import.meta.url).pathname;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("a registry killed mid-upload", () => {
  let dataDir: string;
  let flags: string[];
  let child: ChildProcess | undefined;
  let registryUrl: string;
  let apiUrl: string;

  async function start(): Promise<void> {
    const proc = spawn(process.execPath, [WHARF, "serve", ...flags], { stdio: ["ignore", "ignore", "pipe"] });
    child = proc;
    await new Promise<void>((resolve, reject) => {
      let stderr = "";
      const timer = setTimeout(() => reject(new Error(`wharf serve did not start: ${stderr}`)), 30_000);
      proc.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes("registry on")) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.once("exit", (code) => reject(new Error(`wharf serve exited ${code}: ${stderr}`)));
    });
  }
  async function kill(): Promise<void> {
    const proc = child;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((resolve) => proc.once("exit", resolve));
    proc.kill("SIGKILL");
    await exited;
  }
  const token = async (audience: string) =>
    (await run(process.execPath, [WHARF, "admin", "token", "--audience", audience, ...flags])).stdout.trim();

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "wharf-crash-"));
    const [apiPort, registryPort] = [await freePort(), await freePort()];
    apiUrl = `http://127.0.0.1:${apiPort}`;
    registryUrl = `http://127.0.0.1:${registryPort}`;
    flags = [
      "--data-dir",
      dataDir,
      "--api-addr",
      `127.0.0.1:${apiPort}`,
      "--registry-addr",
      `127.0.0.1:${registryPort}`,
    ];
    await start();
    const res = await fetch(`${apiUrl}/iam/v2/groups`, {
      method: "POST",
      headers: { authorization: `Bearer ${await token("api")}` },
      body: JSON.stringify({ name: "crash" }),
    });
    assert.equal(res.status, 200, await res.text());
  });
  after(async () => {
    await kill();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("shows no partial blob, and uploads work again after the restart", async () => {
    const auth = { authorization: `Bearer ${await token("registry")}` };
    const blob = Buffer.alloc(8 * 1024 * 1024, 42);
    const digest = `sha256:${createHash("sha256").update(blob).digest("hex")}`;

    // A monolithic upload and a session chunk, both cut off by the kill.
    const post = await fetch(`${registryUrl}/v2/crash/app/blobs/uploads/`, { method: "POST", headers: auth });
    assert.equal(post.status, 202);
    const session = post.headers.get("location") ?? "";
    const sending = [`/v2/crash/app/blobs/uploads/?digest=${digest}`, session].map(
      (path) =>
        new Promise<void>((resolve) => {
          const req = request(`${registryUrl}${path}`, {
            method: path === session ? "PATCH" : "POST",
            headers: { ...auth, "content-length": blob.length },
          });
          req.on("error", () => resolve());
          req.on("response", () => resolve());
          req.write(blob.subarray(0, 3 * 1024 * 1024));
        }),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    await kill();
    await Promise.all(sending);

    await start();
    const head = await fetch(`${registryUrl}/v2/crash/app/blobs/${digest}`, {
      method: "HEAD",
      headers: auth,
    });
    assert.equal(head.status, 404, "no partial blob is visible");
    // Continuing the interrupted session is refused cleanly or starts from a consistent offset.
    const resumed = await fetch(`${registryUrl}${session}`, { method: "PATCH", headers: auth, body: blob });
    if (resumed.status === 202) {
      const put = await fetch(`${registryUrl}${session}?digest=${digest}`, { method: "PUT", headers: auth });
      assert.equal(put.status, 201, "a session that lost nothing finishes");
    } else {
      assert.equal(resumed.status, 400);
      assert.equal(
        ((await resumed.json()) as { errors: { code: string }[] }).errors[0]?.code,
        "BLOB_UPLOAD_INVALID",
      );
      const again = await fetch(`${registryUrl}/v2/crash/app/blobs/uploads/?digest=${digest}`, {
        method: "POST",
        headers: auth,
        body: blob,
      });
      assert.equal(again.status, 201);
    }
    const get = await fetch(`${registryUrl}/v2/crash/app/blobs/${digest}`, { headers: auth });
    assert.equal(
      createHash("sha256")
        .update(Buffer.from(await get.arrayBuffer()))
        .digest("hex"),
      digest.slice(7),
    );
  });
});
