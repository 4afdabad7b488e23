import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { forEachEngine } from "../support/databases.js";
import { parsePrometheusText, sampleValue } from "../support/prometheus-text.js";
import {
  adminTokenOf,
  runWharf,
  serveProcess,
  stopProcess,
  type WharfProcess,
} from "../support/wharf-process.js";

// `wharf serve --workers N` (ADR 0036): real processes, a real PostgreSQL. Each request opens its
// own connection, so the primary's round-robin spreads them over the workers.

const run = promisify(execFile);

/** GET `url` on a new connection (no keep-alive); resolves to the status. */
function getOnce(url: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

/** Waits until `check` holds (polled every 20 ms), failing after `ms`. */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `timed out waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The JSON lines the processes printed. */
function lines(server: WharfProcess): Record<string, unknown>[] {
  return server
    .output()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The pids of the primary's worker processes. */
async function workerPids(server: WharfProcess): Promise<number[]> {
  const { stdout } = await run("ps", ["-o", "pid=", "--ppid", String(server.child.pid)]);
  return stdout
    .split("\n")
    .map((s) => Number(s.trim()))
    .filter((pid) => pid > 0);
}

describe("wharf serve --workers on SQLite", () => {
  it("is refused with one line saying to use PostgreSQL (exit 2)", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "wharf-workers-sqlite-"));
    try {
      const { code, stderr } = await runWharf(["serve", "--workers", "2", "--data-dir", dataDir], {
        PATH: process.env.PATH,
      });
      assert.equal(code, 2);
      assert.match(stderr, /^wharf: --workers 2 needs PostgreSQL \(--database-url postgres:\/\/…\)[^\n]*\n$/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

forEachEngine(
  "wharf serve --workers 2",
  (db) => {
    let dataDir: string;
    let server: WharfProcess;
    let env: Record<string, string>;
    let token: string;
    // A new connection each time: a pooled one may lead to a worker the test killed.
    const metrics = async () => {
      const text = await new Promise<string>((resolve, reject) => {
        const req = request(`${server.apiUrl}/metrics`, { agent: false }, (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => {
            body += c;
          });
          res.on("end", () =>
            res.statusCode === 200 ? resolve(body) : reject(new Error(`${res.statusCode}`)),
          );
        });
        req.on("error", reject);
        req.end();
      });
      return parsePrometheusText(text);
    };
    const baseRequests = (samples: ReturnType<typeof parsePrometheusText>) =>
      samples
        .filter((s) => s.name === "wharf_registry_requests_total" && s.labels.route === "base")
        .reduce((sum, s) => sum + s.value, 0);

    before(async () => {
      dataDir = await mkdtemp(join(tmpdir(), "wharf-workers-"));
      const { databaseUrl } = (await db.freshOptions()) as { databaseUrl: string };
      env = { WHARF_DATABASE_URL: databaseUrl };
      server = await serveProcess(dataDir, {
        ...env,
        WHARF_WORKERS: "2",
        WHARF_METRICS_PUBLIC: "true",
        WHARF_SHUTDOWN_DELAY: "0",
      });
      token = await adminTokenOf(dataDir, server.apiUrl, { audience: "registry", env });
    });
    after(async () => {
      await stopProcess(server, "SIGKILL");
      await rm(dataDir, { recursive: true, force: true });
    });

    it("two workers share both ports (port 0 too) and /metrics counts the requests of both", async () => {
      assert.match(server.output(), /wharf: 2 workers/);
      assert.equal((await workerPids(server)).length, 2);
      const before = baseRequests(await metrics());
      for (let i = 0; i < 20; i++) assert.equal(await getOnce(`${server.registryUrl}/v2/`, token), 200);
      const served = lines(server).filter((l) => l.service === "registry" && l.path === "/v2/");
      const byWorker = new Set(served.map((l) => l.worker));
      assert.deepEqual([...byWorker].sort(), [1, 2], "both workers answered requests");
      assert.equal(baseRequests(await metrics()) - before, 20, "the host's count, not one worker's");
      const samples = await metrics();
      assert.equal(sampleValue(samples, "wharf_workers"), 2);
      assert.equal(sampleValue(samples, "wharf_worker_restarts_total"), 0);
    });

    it("a worker killed with SIGKILL is restarted, logged and counted; the service keeps answering", async () => {
      const [victim] = await workerPids(server);
      assert.ok(victim);
      process.kill(victim, "SIGKILL");
      await until("the restart is counted", async () => {
        // A connection the primary handed to the dying worker may be reset: ask again.
        const samples = await metrics().catch(() => []);
        return sampleValue(samples, "wharf_worker_restarts_total") === 1;
      });
      const exited = lines(server).filter((l) => l.msg === "worker exited; restarting it");
      assert.equal(exited.length, 1);
      assert.equal(exited[0]?.pid, victim);
      assert.equal(exited[0]?.signal, "SIGKILL");
      await until("the new worker serves", () => lines(server).some((l) => l.msg === "worker restarted"));
      const pids = await workerPids(server);
      assert.equal(pids.length, 2);
      assert.ok(!pids.includes(victim));
      for (let i = 0; i < 10; i++) assert.equal(await getOnce(`${server.registryUrl}/v2/`, token), 200);
    });

    it("SIGTERM to the primary stops every worker gracefully and exits 0", async () => {
      const exited = new Promise<number | null>((resolve) => server.child.once("exit", resolve));
      server.child.kill("SIGTERM");
      assert.equal(await exited, 0);
      const stopped = lines(server).filter((l) => l.msg === "stopped");
      assert.deepEqual(
        stopped.map((l) => l.worker ?? "primary").sort(),
        [1, 2, "primary"].sort(),
        "each worker and the primary logged stopped",
      );
      assert.equal(
        lines(server).filter((l) => l.msg === "worker exited; restarting it").length,
        1,
        "no restart",
      );
    });
  },
  ["postgres"],
);
