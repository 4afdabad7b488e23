import "./dashboard.css";
import { Breadcrumbs } from "../../components/breadcrumbs";
import { GroupChoice } from "../../components/group-choice";
import { useGroupPath } from "../../lib/paths";
import type { RouteParams } from "../../lib/route-params";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";
import { AuditPanel } from "./audit-panel";
import { EolPanel } from "./eol-panel";
import { PushesPanel } from "./pushes-panel";
import { ReposPanel } from "./repos-panel";
import { StoragePanel } from "./storage-panel";
import { VulnerableTagsPanel } from "./vulnerable-tags-panel";
import { WebhooksPanel } from "./webhooks-panel";

/**
 * `/dashboard/<group uid>`: an organization (or folder) at a glance. Each panel loads and fails
 * on its own, so a caller without a capability sees that panel say what it needs. Without a
 * group: a group chooser.
 */
export default function DashboardPage(params: RouteParams) {
  const group = params["*"] ?? "";
  if (!group) {
    return (
      <main id="main">
        <h1>Dashboard</h1>
        <GroupChoice basePath="/dashboard" purpose="to see its dashboard" />
      </main>
    );
  }
  return <Dashboard group={group} />;
}

function Dashboard({ group }: { group: string }) {
  const client = useClient();
  const path = useGroupPath(group);
  const insights = useQuery(() => client.registry.insights.getInsights({ groupUid: group }), [client, group]);
  const name = path.data?.at(-1)?.name ?? group;
  return (
    <main id="main">
      <Breadcrumbs steps={(path.data ?? []).slice(0, -1)} current={name} />
      <h1>Dashboard of {name}</h1>
      <div className="dashboard-grid">
        <ReposPanel org={group} />
        <StoragePanel org={group} />
        <WebhooksPanel org={group} />
        <PushesPanel insights={insights} />
        <VulnerableTagsPanel insights={insights} />
        <EolPanel org={group} />
        <AuditPanel org={group} />
      </div>
    </main>
  );
}
