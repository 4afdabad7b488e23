import { useState } from "react";
import type { TagHistoryRecord } from "wharf/sdk";
import { formatAgo, formatBytes, formatTime, pathWithUid, shortDigest } from "../lib/format";
import { digestDetails } from "../lib/image-details";
import { Link } from "../lib/router";
import { useQuery } from "../lib/use-query";
import { useClient } from "../lib/wharf-context";
import { ApiError } from "./api-error";
import { ConfirmButton } from "./confirm-button";
import { CopyButton } from "./copy-button";
import { EmptyState } from "./empty-state";
import { SeverityCounts } from "./severity-counts";

/** Records shown at first, and added by each "show older". */
export const TIMELINE_PAGE = 50;

/** How the timeline offers to move the tag back to a record's digest. */
export interface RestoreAction {
  /** The tag's name, for the confirmation. */
  tag: string;
  /** Moves the tag to `digest` (RestoreTag); a rejection is shown in the confirmation dialog. */
  onRestore(digest: string): Promise<void>;
}

/**
 * A tag's history, newest first: per record its time, digest (short, copyable, linked to the
 * image page), architectures and size, vulnerability counts when a report exists, and a "copy
 * pinned reference" button (`<image>@sha256:…`). With `restore`, each record naming another digest
 * than the current one offers "Restore" (after a confirmation). Long histories show
 * {@link TIMELINE_PAGE} records at a time.
 */
export function TagTimeline({
  records,
  repoUid,
  image,
  restore,
}: {
  /** Oldest first, as the registry answers. */
  records: readonly TagHistoryRecord[];
  repoUid: string;
  /** `host/org/repo`, for pinned references. */
  image: string;
  /** Absent for callers who may not move the tag. */
  restore?: RestoreAction;
}) {
  const [shown, setShown] = useState(TIMELINE_PAGE);
  const newestFirst = [...records].reverse();
  const newest = newestFirst[0];
  const currentDigest = newest && !newest.deleted ? newest.digest : "";
  if (records.length === 0) {
    return (
      <EmptyState title="No history yet">
        <p>The tag's history starts with its next push.</p>
      </EmptyState>
    );
  }
  return (
    <>
      <ol className="timeline" aria-label="Tag history, newest first">
        {newestFirst.slice(0, shown).map((r, i) => (
          <li
            // Records are append-only and shown in a fixed order; two may share time and digest.
            // biome-ignore lint/suspicious/noArrayIndexKey: the position is the record's identity here
            key={`${r.updateTimestamp}-${r.digest}-${i}`}
            className={r.deleted ? "deleted" : undefined}
            data-testid="history-record"
          >
            <TimelineRecord
              record={r}
              repoUid={repoUid}
              image={image}
              current={i === 0 && !r.deleted}
              restore={restore && r.digest !== currentDigest ? restore : undefined}
              currentDigest={currentDigest}
            />
          </li>
        ))}
      </ol>
      {shown < newestFirst.length && (
        <button type="button" className="secondary" onClick={() => setShown(shown + TIMELINE_PAGE)}>
          Show older records ({newestFirst.length - shown} more)
        </button>
      )}
    </>
  );
}

function TimelineRecord({
  record,
  repoUid,
  image,
  current,
  restore,
  currentDigest,
}: {
  record: TagHistoryRecord;
  repoUid: string;
  image: string;
  current: boolean;
  restore: RestoreAction | undefined;
  /** What the tag names now ("" when deleted), for the restore confirmation. */
  currentDigest: string;
}) {
  const time = (
    <time dateTime={record.updateTimestamp} title={formatAgo(record.updateTimestamp)}>
      {formatTime(record.updateTimestamp)}
    </time>
  );
  if (record.deleted) {
    return (
      <div className="record-line">
        {time} <span className="badge">tag deleted</span>
      </div>
    );
  }
  const pinned = `${image}@${record.digest}`;
  return (
    <>
      <div className="record-line">
        {time}
        {current && <span className="badge">current</span>}
        <Link to={`${pathWithUid(`/images/${encodeURIComponent(record.digest)}`, repoUid)}`} className="mono">
          {shortDigest(record.digest)}
        </Link>
        <CopyButton text={record.digest} label={`Copy digest ${shortDigest(record.digest)}`} />
        <CopyButton
          text={pinned}
          caption="Copy pinned reference"
          label={`Copy pinned reference ${shortDigest(record.digest)}`}
        />
        {restore && (
          <ConfirmButton
            label="Restore"
            accessibleName={`Restore ${restore.tag} to ${shortDigest(record.digest)}`}
            title={`Restore ${restore.tag}?`}
            confirmLabel="Restore"
            onConfirm={() => restore.onRestore(record.digest)}
          >
            <p>
              Move <code>{restore.tag}</code>
              {currentDigest && (
                <>
                  {" "}
                  from <code>{shortDigest(currentDigest)}</code>
                </>
              )}{" "}
              back to <code>{shortDigest(record.digest)}</code>, the image it named on{" "}
              {formatTime(record.updateTimestamp)}. Pulls of the tag get that image from now on; the history
              gains a record.
            </p>
          </ConfirmButton>
        )}
      </div>
      <RecordDetails repoUid={repoUid} digest={record.digest} />
    </>
  );
}

function RecordDetails({ repoUid, digest }: { repoUid: string; digest: string }) {
  const client = useClient();
  const details = useQuery(() => digestDetails(client, repoUid, digest), [client, repoUid, digest]);
  if (details.error) return <ApiError error={details.error} />;
  if (!details.data) return <div className="muted small-text">…</div>;
  const { architectures, sizes, counts } = details.data;
  return (
    <div className="record-line muted">
      <span data-testid="architectures">{architectures.join(", ") || "no platform"}</span>
      <span>
        {sizes
          .map((s) => `${formatBytes(s.size)}${sizes.length > 1 ? ` (${s.architecture})` : ""}`)
          .join(", ")}
      </span>
      {counts ? <SeverityCounts counts={counts} /> : <span>no vulnerability report</span>}
    </div>
  );
}
