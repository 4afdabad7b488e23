import { useState } from "react";
import { listAll, registry } from "wharf/sdk";
import { ApiError } from "../../components/api-error";
import { ConfirmDelete } from "../../components/confirm-delete";
import { EmptyState } from "../../components/empty-state";
import { firstItems } from "../../components/first-items";
import { ResourceList } from "../../components/resource-list";
import type { RouteParams } from "../../lib/route-params";
import { Link, useSearchParams } from "../../lib/router";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";
import { MirroringLayout } from "./mirroring-layout";
import { ReplicationRuleForm } from "./replication-rule-form";
import { ReplicationRuns } from "./replication-runs";

const { ReplicationRule_Direction: Direction, ReplicationRule_Trigger: Trigger } = registry;
const MAX_RULES = 200;

/**
 * `/mirroring/replication/<org uid>[?rule=<rule uid>]`: the organization's replication rules (add,
 * edit, delete) and, for the chosen rule, Run now and its runs with live progress.
 */
export default function ReplicationPage(params: RouteParams) {
  const org = params["*"] ?? "";
  const client = useClient();
  const info = useQuery(
    () => (org ? client.iam.groups.getGroup({ uid: org }) : Promise.resolve(undefined)),
    [client, org],
  );
  return (
    <MirroringLayout section="replication" org={org} title={info.data?.name}>
      <ApiError error={info.error} />
      {info.data && <Rules org={org} />}
    </MirroringLayout>
  );
}

/** Where a rule copies: "to https://remote (into mirror/)" or "from https://remote". */
function describeRemote(rule: registry.ReplicationRule): string {
  const remote = rule.remote?.url ?? "";
  const destination = rule.destination ? ` (into ${rule.destination}/)` : "";
  return rule.direction === Direction.PULL ? `from ${remote}${destination}` : `to ${remote}${destination}`;
}

function triggerText(rule: registry.ReplicationRule): string {
  if (rule.trigger === Trigger.INTERVAL) return `every ${rule.interval}`;
  if (rule.trigger === Trigger.ON_PUSH) return "on push";
  return "manual";
}

function Rules({ org }: { org: string }) {
  const client = useClient();
  const search = useSearchParams();
  const selected = search.get("rule") ?? "";
  const [editing, setEditing] = useState<registry.ReplicationRule>();
  // A new key after each create gives the next rule an empty form.
  const [created, setCreated] = useState(0);
  const rules = useQuery(
    () =>
      firstItems(
        listAll(client.registry.replicationRules.listReplicationRules, {
          uidp: { childrenOf: org },
          orderBy: "name",
        }),
        MAX_RULES,
      ),
    [client, org],
  );
  const chosen = rules.data?.items.find((r) => r.uid === selected);
  return (
    <>
      <p>
        A rule copies matching tags (manifests, referrers and the blobs the other side lacks) between this
        organization and another registry: on push, at an interval, or when you run it.
      </p>
      <h2>Rules</h2>
      <ResourceList
        query={rules}
        what="replication rules"
        columns={["Name", "Direction", "Remote", "Repositories", "Tags", "Trigger", "State", "Actions"]}
        empty={
          <EmptyState title="No replication rules">
            <p>Add a rule below to copy images to or from another registry.</p>
          </EmptyState>
        }
        row={(r) => (
          <tr key={r.uid} aria-current={r.uid === selected || undefined} data-testid="rule-row">
            <th scope="row">{r.name}</th>
            <td>{Direction[r.direction]}</td>
            <td className="mono">
              {describeRemote(r)}
              {r.remote?.username && <div className="caps">as {r.remote.username}</div>}
            </td>
            <td>
              <code>{r.repoPattern || "*"}</code>
            </td>
            <td>
              <code>{r.tagPattern || "*"}</code>
            </td>
            <td>{triggerText(r)}</td>
            <td>
              <span className={r.enabled ? "badge ok" : "badge warn"}>
                {r.enabled ? "enabled" : "disabled"}
              </span>
            </td>
            <td className="actions">
              <Link to={`/mirroring/replication/${org}?rule=${r.uid}`} aria-label={`Runs of ${r.name}`}>
                Runs
              </Link>{" "}
              <button
                type="button"
                className="secondary"
                aria-label={`Edit rule ${r.name}`}
                onClick={() => setEditing(r)}
              >
                Edit
              </button>{" "}
              <ConfirmDelete
                what={`replication rule ${r.name}`}
                onConfirm={() => client.registry.replicationRules.deleteReplicationRule({ uid: r.uid })}
                onDeleted={rules.reload}
              />
            </td>
          </tr>
        )}
      />
      {editing && (
        <ReplicationRuleForm
          key={editing.uid}
          org={org}
          current={editing}
          onSaved={() => {
            setEditing(undefined);
            rules.reload();
          }}
          onCancel={() => setEditing(undefined)}
        />
      )}
      {chosen && <ReplicationRuns key={chosen.uid} rule={chosen} />}
      <ReplicationRuleForm
        key={`create-${created}`}
        org={org}
        onSaved={() => {
          setCreated((n) => n + 1);
          rules.reload();
        }}
      />
    </>
  );
}
