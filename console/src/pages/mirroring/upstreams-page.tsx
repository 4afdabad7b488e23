import { useState } from "react";
import { listAll, type registry } from "wharf/sdk";
import { ApiError } from "../../components/api-error";
import { ConfirmDelete } from "../../components/confirm-delete";
import { CopyButton } from "../../components/copy-button";
import { EmptyState } from "../../components/empty-state";
import { firstItems } from "../../components/first-items";
import { ResourceList } from "../../components/resource-list";
import { TimeText } from "../../components/time-text";
import { useRegistryHost } from "../../lib/paths";
import type { RouteParams } from "../../lib/route-params";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";
import { MirroringLayout } from "./mirroring-layout";
import { UpstreamForm } from "./upstream-form";

const MAX_UPSTREAMS = 200;

/**
 * `/mirroring/upstreams/<org uid>`: the organization's pull-through cache upstreams with the pull
 * prefix of each, add, edit, delete. Without an organization: the chooser.
 */
export default function UpstreamsPage(params: RouteParams) {
  const org = params["*"] ?? "";
  const client = useClient();
  const info = useQuery(
    () => (org ? client.iam.groups.getGroup({ uid: org }) : Promise.resolve(undefined)),
    [client, org],
  );
  return (
    <MirroringLayout section="upstreams" org={org} title={info.data?.name}>
      <ApiError error={info.error} />
      {info.data && <Upstreams org={org} orgName={info.data.name} />}
    </MirroringLayout>
  );
}

function Upstreams({ org, orgName }: { org: string; orgName: string }) {
  const client = useClient();
  const host = useRegistryHost();
  const [editing, setEditing] = useState<registry.Upstream>();
  const upstreams = useQuery(
    () =>
      firstItems(
        listAll(client.registry.upstreams.listUpstreams, { uidp: { childrenOf: org }, orderBy: "name" }),
        MAX_UPSTREAMS,
      ),
    [client, org],
  );
  const prefix = (u: registry.Upstream) => `${host.data ?? "<registry host>"}/${orgName}/${u.name}/`;
  return (
    <>
      <p>
        An upstream makes Wharf a pull-through cache: pulling{" "}
        <code>{orgName}/&lt;upstream&gt;/&lt;path&gt;</code> fetches <code>&lt;url&gt;/&lt;path&gt;</code>{" "}
        once, then serves it locally.
      </p>
      <h2>Upstreams</h2>
      <ResourceList
        query={upstreams}
        what="upstreams"
        columns={["Name", "URL", "Credentials", "Tag TTL", "Pull prefix", "Updated", "Actions"]}
        empty={
          <EmptyState title="No upstreams">
            <p>Add a registry below (Docker Hub is https://registry-1.docker.io) to cache its images.</p>
          </EmptyState>
        }
        row={(u) => (
          <tr key={u.uid} data-testid="upstream-row">
            <th scope="row">{u.name}</th>
            <td className="mono">{u.url}</td>
            <td>
              {u.username ? <code>{u.username}</code> : <span className="muted">anonymous</span>}
              {u.hasPassword && <span className="badge ok">password set</span>}
            </td>
            <td>{u.tagTtl || "10m"}</td>
            <td>
              <code data-testid="pull-prefix">{prefix(u)}…</code>{" "}
              <CopyButton text={prefix(u)} label={`Copy the pull prefix of ${u.name}`} />
            </td>
            <td>
              <TimeText value={u.updateTime} />
            </td>
            <td className="actions">
              <button
                type="button"
                className="secondary"
                aria-label={`Edit upstream ${u.name}`}
                onClick={() => setEditing(u)}
              >
                Edit
              </button>{" "}
              <ConfirmDelete
                what={`upstream ${u.name}`}
                onConfirm={() => client.registry.upstreams.deleteUpstream({ uid: u.uid })}
                onDeleted={upstreams.reload}
              />
            </td>
          </tr>
        )}
      />
      {editing && (
        <UpstreamForm
          key={editing.uid}
          org={org}
          current={editing}
          onSaved={() => {
            setEditing(undefined);
            upstreams.reload();
          }}
          onCancel={() => setEditing(undefined)}
        />
      )}
      <UpstreamForm org={org} onSaved={upstreams.reload} />
    </>
  );
}
