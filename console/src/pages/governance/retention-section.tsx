import { useState } from "react";
import { listAll, type registry } from "wharf/sdk";
import { ApiError } from "../../components/api-error";
import { ConfirmDelete } from "../../components/confirm-delete";
import { EmptyState } from "../../components/empty-state";
import { firstItems } from "../../components/first-items";
import { Loading } from "../../components/loading";
import { ResourceList } from "../../components/resource-list";
import { ScopeSelect } from "../../components/scope-select";
import { parentOf, useScopes } from "../../components/scopes";
import { TimeText } from "../../components/time-text";
import { useNavigate, useSearchParams } from "../../lib/router";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";
import { RetentionForm } from "./retention-form";
import { RetentionPreview } from "./retention-preview";
import { describeRule } from "./retention-rules";

const MAX_POLICIES = 200;

/**
 * The retention policies of a group and everything under it (or of one scope, `?parent=`), with
 * their last run; create, edit, delete, and a preview that must be seen before a run.
 */
export default function RetentionSection({ group }: { group: string }) {
  const client = useClient();
  const navigate = useNavigate();
  const parent = useSearchParams().get("parent") ?? "";
  const scopes = useScopes(group);
  const policies = useQuery(
    () =>
      firstItems(
        listAll(client.registry.retentionPolicies.listRetentionPolicies, {
          uidp: parent ? { childrenOf: parent } : { descendantsOf: group },
        }),
        MAX_POLICIES,
      ),
    [client, group, parent],
  );
  const [editing, setEditing] = useState<registry.RetentionPolicy>();
  const [previewing, setPreviewing] = useState<registry.RetentionPolicy>();
  const pathOf = (uid: string) => scopes.data?.pathOf(uid) ?? uid;
  const titleOf = (p: registry.RetentionPolicy) =>
    p.description || `the policy of ${pathOf(parentOf(p.uid))}`;
  const showParent = (uid: string) =>
    navigate(`/governance/retention/${group}${uid ? `?parent=${encodeURIComponent(uid)}` : ""}`);
  return (
    <section aria-labelledby="retention-heading">
      <h2 id="retention-heading">Retention policies</h2>
      {scopes.loading && !scopes.data && <Loading what="Loading folders and repos" />}
      <ApiError error={scopes.error} />
      {scopes.data && (
        <div className="toolbar">
          <ScopeSelect
            label="Show policies of"
            scopes={scopes.data.list}
            value={parent}
            onChange={showParent}
            allLabel="Everything in this group"
          />
        </div>
      )}
      <ResourceList
        query={policies}
        what="retention policies"
        columns={["Policy", "Applies to", "Rules", "Schedule", "Last run", "Actions"]}
        empty={
          <EmptyState title="No retention policies">
            <p>Add one below; preview it to see which tags a run would delete before anything is deleted.</p>
          </EmptyState>
        }
        row={(p) => (
          <tr key={p.uid}>
            <td>{p.description || <code>{p.uid}</code>}</td>
            <td>{pathOf(parentOf(p.uid))}</td>
            <td>
              <ul className="plain-list">
                {p.rules.map((r, i) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: a rule's place is its identity.
                  <li key={i}>{describeRule(r)}</li>
                ))}
              </ul>
            </td>
            <td>
              {p.schedule ? `every ${p.schedule}` : "manual"}
              {p.nextRunTime && (
                <div className="muted">
                  next <TimeText value={p.nextRunTime} />
                </div>
              )}
            </td>
            <td data-testid="last-run">
              {p.lastRun ? (
                <>
                  <TimeText value={p.lastRun.endTime} />: deleted {String(p.lastRun.deletedTags)}
                  {p.lastRun.scheduled ? " (scheduled)" : ""}
                </>
              ) : (
                <span className="muted">never</span>
              )}
            </td>
            <td>
              <div className="row-actions">
                <button type="button" aria-label={`Preview ${titleOf(p)}`} onClick={() => setPreviewing(p)}>
                  Preview
                </button>
                <button
                  type="button"
                  className="secondary"
                  aria-label={`Edit ${titleOf(p)}`}
                  onClick={() => setEditing(p)}
                >
                  Edit
                </button>
                <ConfirmDelete
                  what={`retention policy ${titleOf(p)}`}
                  onConfirm={() => client.registry.retentionPolicies.deleteRetentionPolicy({ uid: p.uid })}
                  onDeleted={() => {
                    if (editing?.uid === p.uid) setEditing(undefined);
                    if (previewing?.uid === p.uid) setPreviewing(undefined);
                    policies.reload();
                  }}
                />
              </div>
            </td>
          </tr>
        )}
      />
      {previewing && (
        <RetentionPreview
          key={previewing.uid}
          policy={previewing}
          title={titleOf(previewing)}
          onRan={policies.reload}
          onClose={() => setPreviewing(undefined)}
        />
      )}
      {scopes.data && (
        <RetentionForm
          key={editing?.uid ?? "new"}
          scopes={scopes.data.list}
          defaultParent={parent || group}
          editing={editing}
          onSaved={() => {
            setEditing(undefined);
            policies.reload();
          }}
          onCancel={() => setEditing(undefined)}
        />
      )}
    </section>
  );
}
