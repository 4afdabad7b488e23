import cluster, { type Worker } from "node:cluster";
import { Counter, Gauge, Registry } from "prom-client";
import { redactUrl, type WharfConfig } from "../../config/config.js";
import { openConfiguredStore } from "../../config/open-configured-store.js";
import { answerHostMetrics } from "../../observability/cluster-metrics.js";
import { info, type LogLine } from "./graceful-stop.js";

/** The environment variable that makes a `wharf serve` process a worker, and names its slot (1…N). */
export const WORKER_SLOT_ENV = "WHARF_WORKER_SLOT";

/** A worker's message once it serves: where it listens. */
export interface WorkerServing {
  type: "wharf:serving";
  apiUrl: string;
  registryUrl: string;
}

/** The primary's message asking a worker to take its shutdown to `step` (1 = start, 2 = skip the delay). */
export interface WorkerStop {
  type: "wharf:stop";
  step: number;
}

/** A worker that restarts sooner than this after it started waits this long first (no hot loop). */
const RESTART_BACKOFF_MS = 1_000;

/**
 * `wharf serve --workers N` (N > 1, PostgreSQL; ADR 0036), the primary process. It migrates the
 * database once, then forks worker 1 (which seeds a new deployment alone), then the others, each a
 * `wharf serve` sharing both ports through node:cluster (the primary binds nothing; port 0 gives
 * every worker the port the first one got). Once all serve it prints where they listen, as
 * `wharf serve` does. A worker that exits is logged, counted in `wharf_worker_restarts_total` and
 * started again in its slot. `/metrics` (asked of any worker) answers for the host: the primary
 * sums the workers' metrics and adds its own. SIGTERM/SIGINT are forwarded to every worker
 * (graceful: ADR 0035; a second one skips the delay), and so is SIGHUP when TLS is on (each worker
 * reloads its certificates, ADR 0039); it resolves 0 once all exited 0. A worker
 * that fails to start (its own line on stderr) stops the others; it resolves to that exit code.
 */
export async function runPrimary(config: WharfConfig, log: LogLine): Promise<number> {
  await (await openConfiguredStore(config)).close();
  const own = new Registry();
  const restarts = new Counter({
    name: "wharf_worker_restarts_total",
    help: "Worker processes of this host restarted after they exited unasked.",
    registers: [own],
  });
  new Gauge({
    name: "wharf_workers",
    help: "Worker processes this host runs (--workers).",
    registers: [own],
  }).set(config.workers);
  answerHostMetrics(own);

  const slots = new Map<Worker, { slot: number; startedAt: number }>();
  let step = 0;
  const fork = (slot: number): Worker => {
    const worker = cluster.fork({ [WORKER_SLOT_ENV]: String(slot) });
    slots.set(worker, { slot, startedAt: performance.now() });
    // One that was still starting when the shutdown began stops as soon as it serves.
    worker.on("message", (message: WorkerServing) => {
      if (message?.type === "wharf:serving" && step > 0 && worker.isConnected())
        worker.send({ type: "wharf:stop", step } satisfies WorkerStop);
    });
    return worker;
  };
  const serving = (worker: Worker) =>
    new Promise<WorkerServing>((resolve, reject) => {
      worker.on("message", (message: WorkerServing) => {
        if (message?.type === "wharf:serving") resolve(message);
      });
      worker.once("exit", (code, signal) => reject(new WorkerFailed(code ?? 1, signal)));
    });
  const allExited = () =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (Object.keys(cluster.workers ?? {}).length === 0) resolve();
      };
      cluster.on("exit", check);
      check();
    });
  const stopAll = (n: number) => {
    for (const worker of Object.values(cluster.workers ?? {}))
      if (worker?.isConnected()) worker.send({ type: "wharf:stop", step: n } satisfies WorkerStop);
  };

  let urls: WorkerServing;
  try {
    urls = await serving(fork(1));
    const others = Array.from({ length: config.workers - 1 }, (_, i) => serving(fork(i + 2)));
    await Promise.all(others);
  } catch (err) {
    step = 2;
    const exited = allExited();
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill("SIGKILL");
    await exited;
    return err instanceof WorkerFailed ? err.code || 1 : 1;
  }

  let failedStops = 0;
  cluster.on("exit", (worker, code, signal) => {
    const started = slots.get(worker);
    slots.delete(worker);
    if (started === undefined) return;
    if (step > 0) {
      if (code !== 0) failedStops++;
      return;
    }
    restarts.inc();
    log({
      time: new Date().toISOString(),
      level: "warn",
      msg: "worker exited; restarting it",
      worker: started.slot,
      pid: worker.process.pid,
      code,
      signal,
    });
    const lived = performance.now() - started.startedAt;
    const restart = () => {
      if (step > 0) return;
      const again = fork(started.slot);
      serving(again).then(
        () => info(log, "worker restarted", { worker: started.slot, pid: again.process.pid }),
        () => {},
      );
    };
    setTimeout(restart, lived < RESTART_BACKOFF_MS ? RESTART_BACKOFF_MS : 0);
  });

  // Each worker reloads its own certificates (and logs it); the primary serves no connection.
  const onHangup = () => {
    const workers = Object.values(cluster.workers ?? {}).filter((worker) => worker?.isConnected());
    for (const worker of workers) worker?.process.kill("SIGHUP");
    info(log, "SIGHUP forwarded to the workers: they reload the TLS certificates", {
      workers: workers.length,
    });
  };
  if (config.tls.api || config.tls.registry) process.on("SIGHUP", onHangup);

  const signalled = new Promise<void>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      step++;
      if (step === 1) {
        info(log, "shutdown started", { signal, workers: Object.keys(cluster.workers ?? {}).length });
        resolve();
      } else info(log, "signal forwarded to the workers", { signal });
      stopAll(step);
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  });
  // Printed once the handlers are in place: whoever reads the URLs may signal at once.
  process.stderr.write(
    `wharf: platform API on ${urls.apiUrl}\nwharf: registry on ${urls.registryUrl}\nwharf: metadata in ${redactUrl(config.databaseUrl)}\nwharf: ${config.workers} workers\n`,
  );
  await signalled;
  await allExited();
  process.off("SIGHUP", onHangup);
  info(log, "stopped", failedStops > 0 ? { failedStops } : {});
  return failedStops > 0 ? 1 : 0;
}

/** A worker that exited before it served. */
class WorkerFailed extends Error {
  constructor(
    readonly code: number,
    signal: string | null,
  ) {
    super(`a worker exited before it served (code ${code}, signal ${signal})`);
  }
}
