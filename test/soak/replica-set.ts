import { readFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serveProcess, stopProcess, type WharfProcess } from "../support/wharf-process.js";

/** One replica: its loopback ports, data dir and the process running now. */
export interface Replica {
  name: string;
  apiPort: number;
  registryPort: number;
  dataDir: string;
  process: WharfProcess | undefined;
  /** Peak resident set size seen per incarnation (KiB), in start order. */
  peakRssKib: number[];
}

/** When a replica was killed and when its restart answered `/readyz` 200 on both ports. */
export interface KillRecord {
  replica: string;
  killedAt: number;
  readyAt: number | undefined;
}

/** Replicas of one deployment: same database, blob store and public URLs, own ports and data dirs. */
export interface ReplicaSet {
  readonly replicas: Replica[];
  readonly kills: KillRecord[];
  /** `kill -9`s `replica` and starts it again on the same ports; resolves once it is ready. */
  killAndRestart(replica: Replica): Promise<KillRecord>;
  /** Samples every replica's resident memory (call it periodically). */
  sampleMemory(): void;
  stop(): Promise<void>;
}

/** Starts the replicas: the first alone (it migrates the database), then the others together. */
export async function startReplicaSet(opts: {
  count: number;
  ports: { api: number; registry: number }[];
  env: Record<string, string>;
}): Promise<ReplicaSet> {
  const replicas: Replica[] = [];
  for (let i = 0; i < opts.count; i++) {
    const ports = opts.ports[i];
    if (ports === undefined) throw new Error(`no ports for replica ${i}`);
    replicas.push({
      name: `r${i}`,
      apiPort: ports.api,
      registryPort: ports.registry,
      dataDir: await mkdtemp(join(tmpdir(), `wharf-soak-r${i}-`)),
      process: undefined,
      peakRssKib: [],
    });
  }
  const start = async (replica: Replica) => {
    replica.process = await serveProcess(replica.dataDir, opts.env, {
      apiAddr: `127.0.0.1:${replica.apiPort}`,
      registryAddr: `127.0.0.1:${replica.registryPort}`,
      // A restart on a machine the soak (and whatever else runs there) keeps busy took up to 33 s;
      // a slow start shows in the recovery figures, it must not end the soak.
      startTimeoutMs: 120_000,
    });
    replica.peakRssKib.push(0);
    await waitReady(replica);
  };
  const [first, ...rest] = replicas;
  if (first) await start(first);
  await Promise.all(rest.map(start));

  const kills: KillRecord[] = [];
  return {
    replicas,
    kills,
    async killAndRestart(replica) {
      const record: KillRecord = { replica: replica.name, killedAt: Date.now(), readyAt: undefined };
      kills.push(record);
      if (replica.process) await stopProcess(replica.process, "SIGKILL");
      await start(replica);
      record.readyAt = Date.now();
      return record;
    },
    sampleMemory() {
      for (const replica of replicas) {
        const pid = replica.process?.child.pid;
        if (pid === undefined) continue;
        const rss = residentKib(pid);
        const last = replica.peakRssKib.length - 1;
        if (rss !== undefined && last >= 0) {
          replica.peakRssKib[last] = Math.max(replica.peakRssKib[last] ?? 0, rss);
        }
      }
    },
    async stop() {
      await Promise.all(replicas.map((r) => (r.process ? stopProcess(r.process) : undefined)));
    },
  };
}

/** VmRSS of `pid` in KiB, or undefined when the process is gone. */
function residentKib(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const match = /VmRSS:\s+(\d+) kB/.exec(status);
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

async function waitReady(replica: Replica): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (const port of [replica.apiPort, replica.registryPort]) {
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (res) => res.status === 200,
        () => false,
      );
      if (ok) break;
      if (Date.now() > deadline) throw new Error(`replica ${replica.name} not ready within 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
