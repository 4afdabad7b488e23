// Starts CNCF distribution (Debian's `docker-registry`) on a free loopback port with a throwaway
// filesystem store and no auth, for `bench:registry`.
import type { ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, openSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { freePort, getStatus } from "../../test/support/distribution.js";
import { spawnTracked } from "./processes.js";

/** Path of the docker-registry binary (`which`, else /usr/bin/docker-registry). */
export function distributionBinary(): string {
  try {
    const found = execFileSync("which", ["docker-registry"], { encoding: "utf8" }).trim();
    if (found) return found;
  } catch {
    // fall through
  }
  if (existsSync("/usr/bin/docker-registry")) return "/usr/bin/docker-registry";
  throw new Error("docker-registry not found: apt-get install -y docker-registry");
}

export interface Distribution {
  url: string;
  root: string;
  child: ChildProcess;
  pid: number;
}

/**
 * Writes `<dir>/config.yml` (the packaged config's storage settings — in-memory blob descriptor
 * cache, deletes enabled — with a filesystem root in `dir`, loopback only, no auth), starts
 * `docker-registry serve` and waits until `/v2/` answers 200.
 */
export async function startDistribution(dir: string): Promise<Distribution> {
  const port = await freePort();
  const root = join(dir, "storage");
  const config = join(dir, "config.yml");
  await writeFile(
    config,
    [
      "version: 0.1",
      "log:",
      "  level: info",
      "  formatter: text",
      "storage:",
      "  cache:",
      "    blobdescriptor: inmemory",
      "  filesystem:",
      `    rootdirectory: ${root}`,
      "  delete:",
      "    enabled: true",
      "http:",
      `  addr: 127.0.0.1:${port}`,
      `  secret: ${randomBytes(16).toString("hex")}`,
      "",
    ].join("\n"),
  );
  const log = openSync(join(dir, "registry.log"), "a");
  const child = spawnTracked(distributionBinary(), ["serve", config], { stdio: ["ignore", log, log] });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  // The log lives in the work dir, which is removed on exit: a failure quotes its end.
  const logTail = async () =>
    (await readFile(join(dir, "registry.log"), "utf8")).split("\n").slice(-20).join("\n");
  while ((await getStatus(`${url}/v2/`)) !== 200) {
    if (child.exitCode !== null)
      throw new Error(`docker-registry exited ${child.exitCode}:\n${await logTail()}`);
    if (Date.now() > deadline) {
      throw new Error(`docker-registry did not answer /v2/ within 30 s:\n${await logTail()}`);
    }
    await sleep(100);
  }
  return { url, root, child, pid: child.pid as number };
}
