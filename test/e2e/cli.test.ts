import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { serveProcess, WHARF, type WharfProcess } from "../support/wharf-process.js";

const run = promisify(execFile);

describe("the wharf command", () => {
  let dataDir: string;
  let server: WharfProcess;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "wharf-cli-"));
    server = await serveProcess(dataDir);
  });
  after(async () => {
    server.child.kill("SIGTERM");
    await new Promise((r) => server.child.once("exit", r));
    await rm(dataDir, { recursive: true, force: true });
  });

  it("serve prints its addresses and the admin token works against it", async () => {
    assert.match(server.apiUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    const { stdout } = await run(process.execPath, [
      WHARF,
      "admin",
      "token",
      "--data-dir",
      dataDir,
      "--public-url",
      server.apiUrl,
      "--ttl",
      "10m",
    ]);
    const token = stdout.trim();
    assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    const res = await fetch(`${server.apiUrl}/iam/v2/groups`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "acme" }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(((await res.json()) as { name: string }).name, "acme");
    // Secrets stay out of the logs.
    assert.equal(server.output().includes(token), false, "the token never appears in the server's output");
  });

  it("the registry answers on its port, challenging with the token endpoint", async () => {
    const res = await fetch(`${server.registryUrl}/v2/`);
    assert.equal(res.status, 401);
    assert.equal(
      res.headers.get("www-authenticate"),
      `Bearer realm="${server.registryUrl}/token",service="${new URL(server.registryUrl).host}"`,
    );
    const body = (await res.json()) as { errors: Array<{ code: string }> };
    assert.equal(body.errors[0]?.code, "UNAUTHORIZED");
  });

  it("gc runs against the data folder and reports what it removed as JSON", async () => {
    const { stdout } = await run(process.execPath, [WHARF, "gc", "--data-dir", dataDir, "--grace", "1m"]);
    assert.deepEqual(JSON.parse(stdout), {
      manifests: 0,
      links: 0,
      blobs: 0,
      bytes: 0,
      uploads: 0,
      strayObjects: 0,
    });
    await assert.rejects(
      run(process.execPath, [WHARF, "gc", "--data-dir", dataDir, "--window", "forever"]),
      (err: { code: number; stderr: string }) => {
        assert.equal(err.code, 2);
        assert.match(err.stderr, /--window must be a duration/);
        return true;
      },
    );
  });

  it("refuses bad options with exit code 2 and a clear message", async () => {
    await assert.rejects(
      run(process.execPath, [WHARF, "admin", "token", "--data-dir", dataDir, "--ttl", "soon"]),
      (err: { code: number; stderr: string }) => {
        assert.equal(err.code, 2);
        assert.match(err.stderr, /--ttl must be a duration/);
        return true;
      },
    );
    await assert.rejects(
      run(process.execPath, [WHARF, "serve", "--blob-store", "ftp://nowhere"]),
      (err: { code: number; stderr: string }) => {
        assert.equal(err.code, 2);
        assert.match(err.stderr, /--blob-store/);
        return true;
      },
    );
    await assert.rejects(
      run(process.execPath, [WHARF, "serve", "--api-addr", "nowhere"]),
      (err: { code: number; stderr: string }) => {
        assert.equal(err.code, 2);
        assert.match(err.stderr, /--api-addr must be host:port/);
        return true;
      },
    );
  });
});
