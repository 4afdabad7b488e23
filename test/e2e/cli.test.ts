import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { serveProcess, WHARF, type WharfProcess } from "../support/wharf-process.js";
import { startTestServer } from "../support/wharf-server.js";

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
    const { stdout, stderr } = await run(process.execPath, [
      WHARF,
      "gc",
      "--data-dir",
      dataDir,
      "--grace",
      "1m",
    ]);
    // Piped stderr: a plain line per phase, then the totals; no control characters.
    assert.deepEqual(stderr.trim().split("\n"), [
      "wharf gc: uploads (1/6): examined 0, removed 0, freed 0 B",
      "wharf gc: stray uploads (2/6): examined 0, removed 0, freed 0 B",
      "wharf gc: manifests (3/6): examined 0, removed 0, freed 0 B",
      "wharf gc: links (4/6): examined 0, removed 0, freed 0 B",
      "wharf gc: blobs (5/6): examined 0, removed 0, freed 0 B",
      "wharf gc: stray blobs (6/6): examined 0, removed 0, freed 0 B",
      "wharf gc: done: removed 0 objects, freed 0 B",
    ]);
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

  it("gc's progress counts what it examines and removes, and the bytes it frees; --dry-run only says so", async () => {
    // Its clock runs 2 s behind: what it stores is past gc's 1 s grace below as soon as it is stored.
    const wharf = await startTestServer({ clock: { now: () => Date.now() - 2000 } });
    try {
      const token = await wharf.registryToken();
      await wharf.create("/iam/v2/groups", { name: "gcprog" });
      // Two blobs no manifest references: their links and then the blobs are garbage.
      const sizes = [1500, 2600];
      for (const size of sizes) {
        const bytes = Buffer.alloc(size, size % 251);
        const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
        const push = await wharf.registry(`/v2/gcprog/app/blobs/uploads/?digest=${digest}`, {
          method: "POST",
          token,
          body: bytes,
        });
        assert.equal(push.status, 201);
      }
      const gcArgs = [WHARF, "gc", "--data-dir", wharf.dataDir, "--grace", "1s", "--window", "1s"];
      // A dry run first: what the run would remove, removing nothing (the run below still finds it).
      const dry = await run(process.execPath, [...gcArgs, "--dry-run"]);
      const preview = JSON.parse(dry.stdout) as {
        links: number;
        blobs: number;
        bytes: number;
        dryRun: boolean;
      };
      assert.deepEqual([preview.links, preview.blobs, preview.bytes, preview.dryRun], [2, 2, 4100, true]);
      assert.match(
        dry.stderr,
        /^wharf gc --dry-run: blobs \(5\/6\): examined 2, would remove 2, would free 4\.0 KiB$/m,
      );
      assert.match(dry.stderr, /^wharf gc --dry-run: done: would remove 4 objects, would free 4\.0 KiB$/m);
      const { stdout, stderr } = await run(process.execPath, gcArgs);
      const report = JSON.parse(stdout) as { links: number; blobs: number; bytes: number };
      assert.equal((report as { dryRun?: boolean }).dryRun, undefined);
      assert.deepEqual([report.links, report.blobs, report.bytes], [2, 2, 4100]);
      assert.match(stderr, /^wharf gc: links \(4\/6\): examined 2, removed 2, freed 0 B$/m);
      assert.match(stderr, /^wharf gc: blobs \(5\/6\): examined 2, removed 2, freed 4\.0 KiB$/m);
      assert.match(stderr, /^wharf gc: done: removed 4 objects, freed 4\.0 KiB$/m);
    } finally {
      await wharf.close();
    }
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
