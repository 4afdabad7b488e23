import { Readable } from "node:stream";
import type { BlobDriver } from "../storage/blobs/blob-driver.js";
import { BLOB_PROBE_KEY } from "../storage/blobs/blob-layout.js";

/** Liveness path (both ports): 200 `ok` while the process serves requests. */
export const HEALTHZ_PATH = "/healthz";
/** Readiness path (both ports): 200 when the metadata store and blob storage answer, else 503. */
export const READYZ_PATH = "/readyz";

/** How one dependency answered the readiness check. */
export type CheckOutcome = "ok" | "failing" | "timeout";

/**
 * The readiness of the server: its dependencies' checks, or, once it is shutting down, only that
 * (not ready, whatever the dependencies say; they are not asked).
 */
export type ReadinessReport =
  | { ready: boolean; checks: { database: CheckOutcome; blobs: CheckOutcome } }
  | { ready: false; shuttingDown: true };

/** The report of a server that is shutting down (its `/readyz` answers 503 from the first signal). */
export const SHUTTING_DOWN: ReadinessReport = { ready: false, shuttingDown: true };

/** Options of {@link createReadinessCheck}. */
export interface ReadinessOptions {
  /** A cheap query on the metadata store; rejects when the database does not answer. */
  database(): Promise<unknown>;
  /** The blob storage driver; the check stats {@link BLOB_PROBE_KEY}, which must exist. */
  blobs: Pick<BlobDriver, "stat">;
  /** How long each check may take (default 2 s). */
  timeoutMs?: number;
  /** Receives one line when a dependency starts failing (with the real error) and when it recovers. */
  logger(line: object): void;
}

/**
 * Builds the readiness check: runs the database query and a stat of the blob probe object
 * concurrently, each within `timeoutMs`, and reports both. Never rejects. Errors stay in the log;
 * the report only says `failing` or `timeout`, since anyone may ask for it.
 */
export function createReadinessCheck(options: ReadinessOptions): () => Promise<ReadinessReport> {
  const timeoutMs = options.timeoutMs ?? 2000;
  const last = { database: "ok" as CheckOutcome, blobs: "ok" as CheckOutcome };
  const run = async (part: "database" | "blobs", probe: () => Promise<unknown>): Promise<CheckOutcome> => {
    let timer: NodeJS.Timeout | undefined;
    let outcome: CheckOutcome;
    let error: unknown;
    try {
      outcome = await Promise.race([
        probe().then(() => "ok" as const),
        new Promise<"timeout">((resolve) => {
          timer = setTimeout(() => resolve("timeout"), timeoutMs);
        }),
      ]);
    } catch (err) {
      outcome = "failing";
      error = err;
    } finally {
      clearTimeout(timer);
    }
    if (outcome !== last[part]) {
      options.logger({
        time: new Date().toISOString(),
        level: outcome === "ok" ? "info" : "warn",
        msg: outcome === "ok" ? "readiness recovered" : "readiness failing",
        part,
        outcome,
        ...(error === undefined ? {} : { error: String((error as Error)?.message ?? error) }),
      });
      last[part] = outcome;
    }
    return outcome;
  };
  const blobProbe = async () => {
    if ((await options.blobs.stat(BLOB_PROBE_KEY)) === undefined) {
      throw new Error(`blob storage lost its probe object ${BLOB_PROBE_KEY}`);
    }
  };
  return async () => {
    const [database, blobs] = await Promise.all([run("database", options.database), run("blobs", blobProbe)]);
    return { ready: database === "ok" && blobs === "ok", checks: { database, blobs } };
  };
}

/**
 * The HTTP answer to a readiness probe: 200 or 503, and `{"status", "database", "blobs"}` JSON;
 * 503 `{"status":"shutting down"}` once the server is shutting down.
 */
export function readinessAnswer(report: ReadinessReport): { status: number; body: string } {
  if ("shuttingDown" in report)
    return { status: 503, body: `${JSON.stringify({ status: "shutting down" })}\n` };
  const status = report.ready ? "ready" : "unavailable";
  return { status: report.ready ? 200 : 503, body: `${JSON.stringify({ status, ...report.checks })}\n` };
}

/**
 * Writes {@link BLOB_PROBE_KEY} (a few bytes), proving at start-up that blob storage takes writes
 * and giving the readiness check an object to find. Rejects with the driver's error.
 */
export async function writeBlobProbe(blobs: Pick<BlobDriver, "put">): Promise<void> {
  await blobs.put(BLOB_PROBE_KEY, Readable.from([Buffer.from("wharf readiness probe\n")]));
}
