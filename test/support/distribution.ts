/**
 * A real second registry for tests: CNCF distribution 2.8 (Debian's `docker-registry`) on a free
 * loopback port with a filesystem store, optionally behind htpasswd Basic auth.
 *
 * ```ts
 * import { distributionSkip, startDistribution } from "../support/distribution.js";
 * describe("…", { skip: distributionSkip }, () => {
 *   let upstream: Distribution;
 *   before(async () => { upstream = await startDistribution({ users: { alice: "s3cret" } }); });
 *   after(() => upstream?.close());
 *   it("serves from the cache while the upstream is down", async () => {
 *     await upstream.stop();
 *     // … pull through Wharf …
 *     await upstream.restart(); // same port, same storage
 *   });
 * });
 * ```
 *
 * The process is killed when the test process exits, whatever way it exits; `close()` stops it
 * and removes its folder. distribution needs bcrypt hashes in its htpasswd file: bcryptjs makes them.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { accessSync, constants, openSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { get } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import bcrypt from "bcryptjs";

/** Where Debian installs distribution. */
export const DISTRIBUTION_BINARY = "/usr/bin/docker-registry";

/** node:test `skip` value: false when docker-registry is installed, else the reason. */
export const distributionSkip: false | string = (() => {
  try {
    accessSync(DISTRIBUTION_BINARY, constants.X_OK);
    return false;
  } catch {
    return "docker-registry not installed: apt-get install docker-registry";
  }
})();

/** Options of {@link startDistribution}. */
export interface DistributionOptions {
  /** Users of htpasswd Basic auth (name → password); anonymous access when omitted. */
  users?: Record<string, string>;
  /** The folder to keep config, log and storage in (a new temp folder by default; removed by close()). */
  dir?: string;
}

/** A running (or stopped) distribution. */
export interface Distribution {
  /** `http://127.0.0.1:<port>`: stays the same across stop() and restart(). */
  url: string;
  /** `127.0.0.1:<port>`, for skopeo/podman references. */
  host: string;
  /** The folder with config.yml, registry.log and storage/. */
  dir: string;
  /** The process id while running, else undefined. */
  pid(): number | undefined;
  /** Stops the process (SIGTERM, then SIGKILL after 5 s) and waits until it has exited. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same storage; resolves when `/v2/` answers. */
  restart(): Promise<void>;
  /** The last lines of its log, for assertion messages. */
  logTail(lines?: number): Promise<string>;
  /** Stops it and removes its folder. */
  close(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/** A port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The HTTP status of GET `url`, 0 when nothing answers (or nothing within 2 s). */
export function getStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = get(url, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", () => resolve(0));
    req.setTimeout(2000, () => req.destroy());
  });
}

/**
 * Starts docker-registry on a free loopback port (deletes enabled, in-memory blob descriptor
 * cache) and resolves once `/v2/` answers (200, or 401 with auth).
 */
export async function startDistribution(options: DistributionOptions = {}): Promise<Distribution> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), "wharf-distribution-")));
  const port = await freePort();
  const config = join(dir, "config.yml");
  const lines = [
    "version: 0.1",
    "log:",
    "  level: info",
    "  formatter: text",
    "storage:",
    "  cache:",
    "    blobdescriptor: inmemory",
    "  filesystem:",
    `    rootdirectory: ${join(dir, "storage")}`,
    "  delete:",
    "    enabled: true",
    "http:",
    `  addr: 127.0.0.1:${port}`,
    `  secret: ${randomBytes(16).toString("hex")}`,
  ];
  if (options.users) {
    const htpasswd = join(dir, "htpasswd");
    const entries = Object.entries(options.users).map(([name, password]) => {
      // Cost 5: distribution accepts any cost from 4; tests need no slow hashes.
      return `${name}:${bcrypt.hashSync(password, 5)}`;
    });
    await writeFile(htpasswd, `${entries.join("\n")}\n`, { mode: 0o600 });
    lines.push("auth:", "  htpasswd:", "    realm: wharf-test", `    path: ${htpasswd}`);
  }
  await writeFile(config, `${lines.join("\n")}\n`);
  const url = `http://127.0.0.1:${port}`;
  const logFile = join(dir, "registry.log");
  let child: ChildProcess | undefined;

  const logTail = async (count = 20) => {
    try {
      return (await readFile(logFile, "utf8")).split("\n").slice(-count).join("\n");
    } catch {
      return "(no log)";
    }
  };
  const start = async () => {
    const log = openSync(logFile, "a");
    const started = spawn(DISTRIBUTION_BINARY, ["serve", config], { stdio: ["ignore", log, log] });
    child = started;
    running.add(started);
    started.once("exit", () => running.delete(started));
    const deadline = Date.now() + 30_000;
    for (;;) {
      const code = await getStatus(`${url}/v2/`);
      if (code === 200 || code === 401) return;
      if (started.exitCode !== null || started.signalCode !== null) {
        throw new Error(
          `docker-registry exited (${started.exitCode ?? started.signalCode}):\n${await logTail()}`,
        );
      }
      if (Date.now() > deadline)
        throw new Error(`docker-registry did not answer within 30 s:\n${await logTail()}`);
      await sleep(50);
    }
  };
  const stop = async () => {
    const current = child;
    child = undefined;
    if (!current || current.exitCode !== null || current.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => current.once("exit", () => resolve()));
    current.kill("SIGTERM");
    const timer = setTimeout(() => current.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  };

  await start();
  return {
    url,
    host: `127.0.0.1:${port}`,
    dir,
    pid: () => child?.pid,
    stop,
    async restart() {
      await stop();
      await start();
    },
    logTail,
    async close() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
