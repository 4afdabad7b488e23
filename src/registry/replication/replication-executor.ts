import type { Clock } from "../../core/clock.js";
import type { SecretBox } from "../../core/secret-box.js";
import type { ReplicationMetrics } from "../../observability/replication-metrics.js";
import type { ReplicationRunProgress, ReplicationRunRow } from "../../storage/replication-store.js";
import type { Store } from "../../storage/store.js";
import type {
  ReplicationCopier,
  ReplicationCounters,
  ReplicationFailure,
  ReplicationProgress,
  ReplicationRuleConfig,
} from "./replication-contract.js";

/** Failures a run lists; more are only counted (`errorsOmitted`). */
export const MAX_RUN_ERRORS = 100;
/** Longest failure message kept. */
const MAX_MESSAGE_LENGTH = 1000;

/** How one process executes the runs it claims. */
export interface ExecutorOptions {
  store: Store;
  secrets: SecretBox;
  copier: ReplicationCopier;
  clock: Clock;
  logger: (line: object) => void;
  metrics?: ReplicationMetrics | undefined;
  /** This process's name on the leases it takes. */
  owner: string;
  /** How long a lease lasts; it is renewed every third of it (ms). */
  leaseMs: number;
  /** How often progress is written while it changes (ms). */
  progressMs: number;
}

/** Why a run stopped without an outcome: its process is stopping, or another process holds it now. */
class RunStopped extends Error {}

/**
 * Executes one claimed run to its end (ADR 0054): opens the rule's password, calls the copier with
 * a progress sink that counts (and feeds /metrics), writes progress every `progressMs` while it
 * changes and renews the lease every third of `leaseMs` (either failing means another process
 * took the run, or the rule was deleted: the copier is aborted and nothing more is written), and
 * records the outcome: SUCCEEDED when no failure was recorded, else FAILED with the first
 * MAX_RUN_ERRORS failures and how many more. A copier that rejects adds its reason as a failure
 * (unless it says it recorded it already). `stop` (shutdown) aborts the copier and gives the run
 * back at once, for any process to start again.
 */
export async function executeRun(
  opts: ExecutorOptions,
  run: ReplicationRunRow,
  stop: AbortSignal,
): Promise<"SUCCEEDED" | "FAILED" | "stopped"> {
  const { store, owner } = opts;
  const progress: ReplicationRunProgress = {
    copiedManifests: 0,
    copiedBlobs: 0,
    copiedBytes: 0,
    skippedBlobs: 0,
    errors: [],
    errorsOmitted: 0,
  };
  const fail = (failure: ReplicationFailure) => {
    if (progress.errors.length < MAX_RUN_ERRORS) {
      progress.errors.push({
        reference: failure.reference.slice(0, MAX_MESSAGE_LENGTH),
        message: failure.message.slice(0, MAX_MESSAGE_LENGTH),
      });
    } else progress.errorsOmitted++;
  };
  const finish = async (state: "SUCCEEDED" | "FAILED") => {
    await store.replication.finishRun(run.uid, owner, { ...progress, state, endTime: opts.clock.now() });
    return state;
  };

  const rule = await store.replication.getRule(run.ruleUid);
  if (!rule) return "stopped"; // deleted with its runs
  let password: string;
  try {
    password = await opts.secrets.open(rule.remotePassword);
  } catch {
    fail({
      reference: rule.remoteUrl,
      message: "the remote's stored password cannot be opened (sealed under another key?); set it again",
    });
    return finish("FAILED");
  }
  const org = await store.groups.get(rule.parentUid);
  const config: ReplicationRuleConfig = {
    uid: rule.uid,
    orgUid: rule.parentUid,
    orgName: org?.name ?? "",
    name: rule.name,
    direction: rule.direction,
    remote: { url: rule.remoteUrl, username: rule.remoteUsername, password },
    repoPattern: rule.repoPattern,
    tagPattern: rule.tagPattern,
    destination: rule.destination,
  };

  const controller = new AbortController();
  const onStop = () => controller.abort(new RunStopped("replication: the server is stopping"));
  stop.addEventListener("abort", onStop, { once: true });
  if (stop.aborted) onStop();
  const lost = () => {
    if (!controller.signal.aborted) controller.abort(new RunStopped("replication: the run's lease was lost"));
  };
  let dirty = false;
  let writing: Promise<void> = Promise.resolve();
  const save = () => {
    if (!dirty || controller.signal.aborted) return;
    dirty = false;
    const snapshot = { ...progress, errors: [...progress.errors] };
    writing = writing
      .then(() => store.replication.saveProgress(run.uid, owner, snapshot))
      .then((held) => (held ? undefined : lost()))
      .catch((err: unknown) =>
        opts.logger({
          level: "warn",
          msg: "replication: could not save progress",
          run: run.uid,
          error: String(err),
        }),
      );
  };
  const renew = () => {
    writing = writing
      .then(() => store.replication.renewLease(run.uid, owner, opts.clock.now() + opts.leaseMs))
      .then((held) => (held ? undefined : lost()))
      .catch((err: unknown) =>
        opts.logger({
          level: "warn",
          msg: "replication: could not renew a lease",
          run: run.uid,
          error: String(err),
        }),
      );
  };
  const saver = setInterval(save, opts.progressMs);
  const renewer = setInterval(renew, Math.max(1, Math.floor(opts.leaseMs / 3)));
  const sink: ReplicationProgress = {
    add(delta: Partial<ReplicationCounters>) {
      progress.copiedManifests += delta.copiedManifests ?? 0;
      progress.copiedBlobs += delta.copiedBlobs ?? 0;
      progress.copiedBytes += delta.copiedBytes ?? 0;
      progress.skippedBlobs += delta.skippedBlobs ?? 0;
      opts.metrics?.copied(delta);
      dirty = true;
    },
    failed(failure) {
      fail(failure);
      dirty = true;
    },
  };

  try {
    await opts.copier.run(config, sink, controller.signal);
  } catch (err) {
    if (controller.signal.aborted) {
      const reason: unknown = controller.signal.reason;
      if (reason instanceof RunStopped && stop.aborted) {
        await writing;
        await store.replication.releaseRun(run.uid, owner).catch(() => undefined);
      }
      return "stopped";
    }
    if (!(err instanceof Error && (err as { recorded?: unknown }).recorded === true)) {
      fail({ reference: rule.remoteUrl, message: err instanceof Error ? err.message : String(err) });
    }
  } finally {
    clearInterval(saver);
    clearInterval(renewer);
    stop.removeEventListener("abort", onStop);
    await writing;
  }
  if (controller.signal.aborted) return "stopped";
  return finish(progress.errors.length > 0 || progress.errorsOmitted > 0 ? "FAILED" : "SUCCEEDED");
}
