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
import { ImmutabilityForm } from "./immutability-form";

const MAX_RULES = 200;

/**
 * The immutability rules of a group and everything under it (or of one folder or repo, `?parent=`),
 * with create, edit (PATCH with an update mask) and delete.
 */
export default function ImmutabilitySection({ group }: { group: string }) {
  const client = useClient();
  const navigate = useNavigate();
  const parent = useSearchParams().get("parent") ?? "";
  const scopes = useScopes(group);
  const rules = useQuery(
    () =>
      firstItems(
        listAll(client.registry.immutabilityRules.listImmutabilityRules, {
          uidp: parent ? { childrenOf: parent } : { descendantsOf: group },
        }),
        MAX_RULES,
      ),
    [client, group, parent],
  );
  const [editing, setEditing] = useState<registry.ImmutabilityRule>();
  const pathOf = (uid: string) => scopes.data?.pathOf(uid) ?? uid;
  const showParent = (uid: string) =>
    navigate(`/governance/immutability/${group}${uid ? `?parent=${encodeURIComponent(uid)}` : ""}`);
  return (
    <section aria-labelledby="immutability-heading">
      <h2 id="immutability-heading">Immutability rules</h2>
      <p>
        A tag matching a rule of its repo, or of a folder or organization above it, never moves and is never
        deleted once it exists: pushes that would move it are refused, and retention keeps it. A pattern
        starting with <code>!</code> excludes (<code>* !latest</code>: every tag but <code>latest</code>).
      </p>
      {scopes.loading && !scopes.data && <Loading what="Loading folders and repos" />}
      <ApiError error={scopes.error} />
      {scopes.data && (
        <div className="toolbar">
          <ScopeSelect
            label="Show rules of"
            scopes={scopes.data.list}
            value={parent}
            onChange={showParent}
            allLabel="Everything in this group"
          />
        </div>
      )}
      <ResourceList
        query={rules}
        what="immutability rules"
        columns={["Applies to", "Tag patterns", "Description", "Updated", "Actions"]}
        empty={
          <EmptyState title="No immutability rules">
            <p>
              Add one below, e.g. <code>v*</code> to freeze every release tag.
            </p>
          </EmptyState>
        }
        row={(rule) => (
          <tr key={rule.uid}>
            <td>{pathOf(parentOf(rule.uid))}</td>
            <td className="mono">{rule.tagPatterns.join(" ")}</td>
            <td>{rule.description || <span className="muted">—</span>}</td>
            <td>
              <TimeText value={rule.updateTime} />
            </td>
            <td>
              <div className="row-actions">
                <button
                  type="button"
                  className="secondary"
                  aria-label={`Edit rule ${rule.tagPatterns.join(" ")}`}
                  onClick={() => setEditing(rule)}
                >
                  Edit
                </button>
                <ConfirmDelete
                  what={`immutability rule ${rule.tagPatterns.join(" ")}`}
                  onConfirm={() =>
                    client.registry.immutabilityRules.deleteImmutabilityRule({ uid: rule.uid })
                  }
                  onDeleted={() => {
                    if (editing?.uid === rule.uid) setEditing(undefined);
                    rules.reload();
                  }}
                />
              </div>
            </td>
          </tr>
        )}
      />
      {scopes.data && (
        <ImmutabilityForm
          key={editing?.uid ?? "new"}
          scopes={scopes.data.list}
          defaultParent={parent || group}
          editing={editing}
          onSaved={() => {
            setEditing(undefined);
            rules.reload();
          }}
          onCancel={() => setEditing(undefined)}
        />
      )}
    </section>
  );
}
