import cluster from "node:cluster";
import {
  ConfigError,
  type ConfigInput,
  loadConfig,
  redactUrl,
  type WharfConfig,
} from "../../config/config.js";
import { prepareConfiguredDatabase, sqlitePathOf } from "../../config/open-configured-store.js";
import { createLogSink } from "../../observability/log.js";
import { type RunningServer, startServer } from "../../server.js";
import { type LogLine, serveUntilSignalled } from "./graceful-stop.js";
import { WORKER_SLOT_ENV, type WorkerServing, type WorkerStop } from "./serve-workers.js";

/**
 * `wharf serve`: readies the database (creating a missing PostgreSQL database when the role may),
 * starts everything and runs until SIGINT/SIGTERM, then shuts down gracefully (ADR 0035) and
 * resolves 0. With TLS on, SIGHUP reloads the certificates (ADR 0039). With `--workers N` (N > 1)
 * it is the primary of N such processes (ADR 0036), which SQLite refuses (exit 2, one line). A
 * start-up failure rejects with its cause (the CLI prints it as one line).
 */
export async function runServe(input: ConfigInput): Promise<number> {
  const config = loadConfig(input);
  const slot = Number(process.env[WORKER_SLOT_ENV]);
  if (cluster.isWorker && slot > 0) return runWorker(config, slot);
  const log: LogLine = await createLogSink(config.log);
  if (config.workers > 1) {
    if (!config.databaseUrl)
      throw new ConfigError(
        `--workers ${config.workers} needs PostgreSQL (--database-url postgres://…): a SQLite database takes one process's writes`,
      );
    return (await import("./serve-workers.js")).runPrimary(config, log);
  }
  await prepareConfiguredDatabase(config);
  const server = await startServer(config, { logger: log });
  const storage = config.databaseUrl ? redactUrl(config.databaseUrl) : sqlitePathOf(config);
  // The signal handlers are in place before the URLs are printed: whoever reads them may signal
  // at once (a test did, and caught the process before its SIGTERM handler existed).
  const stopReloading = reloadTlsOnHangup(server);
  const stopped = serveUntilSignalled(server, config.shutdown, log);
  process.stderr.write(
    `wharf: platform API on ${server.apiUrl}\nwharf: registry on ${server.registryUrl}\nwharf: metadata in ${storage}\n`,
  );
  await stopped;
  stopReloading();
  exitSoon();
  return 0;
}

/**
 * With TLS on, SIGHUP reloads the certificates (ADR 0039; the server logs the outcome); without
 * it SIGHUP keeps node's default (the process ends). Returns the removal of the handler.
 */
function reloadTlsOnHangup(server: Pick<RunningServer, "reloadTls">): () => void {
  const reload = server.reloadTls;
  if (reload === undefined) return () => {};
  const onHangup = () => void reload();
  process.on("SIGHUP", onHangup);
  return () => process.off("SIGHUP", onHangup);
}

/**
 * One worker of `--workers`: serves as `wharf serve` does, garbage collection on schedule in
 * slot 1 only, `/metrics` for the whole host, every log line naming its slot. It tells the primary
 * where it listens, and stops as the primary's forwarded signals say (besides its own signals).
 */
async function runWorker(config: WharfConfig, slot: number): Promise<number> {
  const log: LogLine = await createLogSink({ ...config.log, fields: { worker: slot } });
  const server = await startServer(slot === 1 ? config : { ...config, gcIntervalMs: 0 }, {
    logger: log,
    clusterWorker: true,
  });
  // Handlers first: once the primary hears "serving" it may forward a signal (SIGHUP would end a
  // worker that had no handler yet).
  const stopReloading = reloadTlsOnHangup(server);
  const stopped = serveUntilSignalled(server, config.shutdown, log, (toStep) =>
    process.on("message", (message: WorkerStop) => {
      if (message?.type === "wharf:stop") toStep(message.step, "forwarded by the primary");
    }),
  );
  process.send?.({
    type: "wharf:serving",
    apiUrl: server.apiUrl,
    registryUrl: server.registryUrl,
  } satisfies WorkerServing);
  await stopped;
  stopReloading();
  // The IPC channel would keep the process alive.
  cluster.worker?.disconnect();
  exitSoon();
  return 0;
}

/** Everything is closed; a handle left behind (a request cut mid-way) must not hold the exit. */
function exitSoon(): void {
  setTimeout(() => process.exit(0), 2_000).unref();
}
