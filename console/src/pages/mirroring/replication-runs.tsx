import { useEffect, useState } from "react";
import { formatBytes, registry } from "wharf/sdk";
import { ApiError } from "../../components/api-error";
import { EmptyState } from "../../components/empty-state";
import { Loading } from "../../components/loading";
import { TimeText } from "../../components/time-text";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";

const { ReplicationRun_State: State } = registry;

/** How often the runs are read again while one is queued or running. */
const POLL_MS = 1000;
const MAX_RUNS = 20;

/** The badge class of each run state. */
function badgeOf(state: registry.ReplicationRun_State): string {
  if (state === State.SUCCEEDED) return "badge ok";
  if (state === State.FAILED) return "badge danger";
  return "badge warn";
}

/** Whether a run is still going (its counts still change). */
export function isActive(run: registry.ReplicationRun): boolean {
  return run.state === State.QUEUED || run.state === State.RUNNING;
}

/**
 * A rule's runs, newest first, with "Run now": while a run is queued or running the list is read
 * again every second (live counts), and reading stops once every run has finished.
 */
export function ReplicationRuns({ rule }: { rule: registry.ReplicationRule }) {
  const client = useClient();
  const runs = useQuery(
    async () =>
      (await client.registry.replicationRuns.listReplicationRuns({ rule: rule.uid, pageSize: MAX_RUNS }))
        .runs,
    [client, rule.uid],
  );
  const [started, setStarted] = useState<unknown>();
  const [starting, setStarting] = useState(false);
  const active = (runs.data ?? []).some(isActive);
  const { reload, loading } = runs;
  useEffect(() => {
    if (!active || loading) return;
    const timer = setTimeout(reload, POLL_MS);
    return () => clearTimeout(timer);
  }, [active, loading, reload]);
  const runNow = async () => {
    setStarting(true);
    setStarted(undefined);
    try {
      await client.registry.replicationRules.runReplicationRule({ uid: rule.uid });
      reload();
    } catch (err) {
      setStarted(err);
    } finally {
      setStarting(false);
    }
  };
  const headingId = `runs-${rule.uid}`;
  return (
    <section aria-labelledby={headingId}>
      <h2 id={headingId}>Runs of {rule.name}</h2>
      <p>
        <button type="button" onClick={runNow} disabled={starting}>
          {starting ? "Starting…" : "Run now"}
        </button>{" "}
        <span aria-live="polite" className="muted">
          {active ? "A run is in progress; its counts update every second." : ""}
        </span>
      </p>
      <ApiError error={started} />
      {runs.loading && !runs.data && <Loading what="Loading runs" />}
      <ApiError error={runs.error} />
      {runs.data?.length === 0 && (
        <EmptyState title="No runs yet">
          <p>Run the rule now, or wait for its trigger.</p>
        </EmptyState>
      )}
      {runs.data && runs.data.length > 0 && (
        <ol className="runs" data-testid="replication-runs">
          {runs.data.map((run) => (
            <li key={run.uid} data-testid="replication-run">
              <RunLine run={run} />
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function RunLine({ run }: { run: registry.ReplicationRun }) {
  return (
    <>
      <p>
        <span className={badgeOf(run.state)} data-testid="run-state">
          {State[run.state]}
        </span>{" "}
        {run.trigger ? `${registry.ReplicationRule_Trigger[run.trigger]} run` : "Run"}, started{" "}
        <TimeText value={run.startTime ?? run.createTime} />
        {run.endTime && (
          <>
            , ended <TimeText value={run.endTime} />
          </>
        )}
      </p>
      <dl className="run-progress" aria-label="Progress">
        <div>
          <dt>Manifests copied</dt>
          <dd data-testid="copied-manifests">{String(run.copiedManifests)}</dd>
        </div>
        <div>
          <dt>Blobs copied</dt>
          <dd data-testid="copied-blobs">{String(run.copiedBlobs)}</dd>
        </div>
        <div>
          <dt>Bytes copied</dt>
          <dd data-testid="copied-bytes">{formatBytes(run.copiedBytes)}</dd>
        </div>
        <div>
          <dt>Blobs skipped (already there)</dt>
          <dd data-testid="skipped-blobs">{String(run.skippedBlobs)}</dd>
        </div>
        <div>
          <dt>Errors</dt>
          <dd>{String(BigInt(run.errors.length) + run.errorsOmitted)}</dd>
        </div>
      </dl>
      {run.errors.length > 0 && (
        <ul className="run-errors">
          {run.errors.map((e) => (
            <li key={`${e.reference}:${e.message}`}>
              <code>{e.reference}</code>: {e.message}
            </li>
          ))}
          {run.errorsOmitted > 0n && <li>and {String(run.errorsOmitted)} more</li>}
        </ul>
      )}
    </>
  );
}
