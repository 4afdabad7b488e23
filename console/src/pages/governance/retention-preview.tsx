import { useState } from "react";
import type { registry } from "wharf/sdk";
import { ApiError } from "../../components/api-error";
import { ConfirmButton } from "../../components/confirm-button";
import { EmptyState } from "../../components/empty-state";
import { Loading } from "../../components/loading";
import { TimeText } from "../../components/time-text";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";
import { RetentionTagsTable } from "./retention-tags-table";

/**
 * What a policy's run would delete now (the API's preview, as a table), and only then a Run button
 * that asks first; the run's result (the tags it deleted) replaces the preview.
 */
export function RetentionPreview({
  policy,
  title,
  onRan,
  onClose,
}: {
  policy: registry.RetentionPolicy;
  title: string;
  onRan: () => void;
  onClose: () => void;
}) {
  const client = useClient();
  const preview = useQuery(
    () => client.registry.retentionPolicies.previewRetentionPolicy({ uid: policy.uid }),
    [client, policy.uid],
  );
  const [run, setRun] = useState<registry.RetentionRun>();
  const tags = preview.data?.tags ?? [];
  return (
    <section className="card retention-preview" aria-labelledby="retention-preview-heading">
      <h3 id="retention-preview-heading">{run ? `Run of ${title}` : `Preview of ${title}`}</h3>
      <div aria-live="polite">
        {run ? (
          <RunResult run={run} />
        ) : (
          <>
            {preview.loading && !preview.data && <Loading what="Working out what a run would delete" />}
            <ApiError error={preview.error} />
            {preview.data && tags.length === 0 && (
              <EmptyState title="Nothing to delete">
                <p>Every tag under this policy's scope is kept by a rule (or is immutable).</p>
              </EmptyState>
            )}
            {tags.length > 0 && (
              <>
                <p data-testid="preview-summary">
                  A run now would delete {tags.length} tag{tags.length === 1 ? "" : "s"}:
                </p>
                <RetentionTagsTable caption="Tags a run would delete" tags={tags} />
              </>
            )}
          </>
        )}
      </div>
      <div className="button-row">
        {!run && preview.data && tags.length > 0 && (
          <ConfirmButton
            label="Run now"
            title={`Run ${title}?`}
            confirmLabel="Yes, run and delete"
            onConfirm={async () => {
              setRun(await client.registry.retentionPolicies.runRetentionPolicy({ uid: policy.uid }));
              onRan();
            }}
          >
            <p>
              This deletes the {tags.length} tag{tags.length === 1 ? "" : "s"} the preview lists (and any that
              stopped being kept since), each with a history record, as deleting the tag by hand would.
            </p>
          </ConfirmButton>
        )}
        {!run && (
          <button
            type="button"
            className="secondary small"
            onClick={preview.reload}
            disabled={preview.loading}
          >
            Preview again
          </button>
        )}
        <button type="button" className="secondary small" onClick={onClose}>
          Close
        </button>
      </div>
    </section>
  );
}

function RunResult({ run }: { run: registry.RetentionRun }) {
  return (
    <>
      <p data-testid="run-summary">
        Deleted {String(run.deletedTags)} tag{run.deletedTags === 1n ? "" : "s"} (run <code>{run.uid}</code>,
        finished <TimeText value={run.endTime} />
        ).
      </p>
      {run.tags.length > 0 && <RetentionTagsTable caption="Tags the run deleted" tags={run.tags} />}
    </>
  );
}
