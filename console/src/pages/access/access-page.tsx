import type { ComponentType } from "react";
import { ApiError } from "../../components/api-error";
import { GroupChoice } from "../../components/group-choice";
import "../../components/panels.css";
import type { RouteParams } from "../../lib/route-params";
import { Link, useSearchParams } from "../../lib/router";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";
import IdentitiesSection from "./identities-section";
import IdentityProvidersSection from "./identity-providers-section";
import InvitesSection from "./invites-section";
import PullTokensSection from "./pull-tokens-section";
import RoleBindingsSection from "./role-bindings-section";
import RolesSection from "./roles-section";

/** One tab of the access page: its `?tab=` value, its label and its section. */
interface AccessTab {
  id: string;
  label: string;
  Section: ComponentType<{ group: string }>;
}

const TABS: readonly AccessTab[] = [
  { id: "identities", label: "Identities", Section: IdentitiesSection },
  { id: "roles", label: "Roles", Section: RolesSection },
  { id: "bindings", label: "Role bindings", Section: RoleBindingsSection },
  { id: "invites", label: "Invites", Section: InvitesSection },
  { id: "providers", label: "Identity providers", Section: IdentityProvidersSection },
  { id: "pull-tokens", label: "Pull tokens", Section: PullTokensSection },
];

/**
 * `/access/<group uid>?tab=…`: who may do what in a group: identities, roles, role bindings,
 * invites, identity providers and pull tokens, one tab each. Without a group: a group chooser.
 */
export default function AccessPage(params: RouteParams) {
  const group = params["*"] ?? "";
  const tabId = useSearchParams().get("tab") ?? TABS[0]!.id;
  const client = useClient();
  const info = useQuery(
    () => (group ? client.iam.groups.getGroup({ uid: group }) : Promise.resolve(undefined)),
    [client, group],
  );
  if (!group) {
    return (
      <main id="main">
        <h1>Access</h1>
        <GroupChoice basePath="/access" purpose="to manage who may use it" />
      </main>
    );
  }
  const tab = TABS.find((t) => t.id === tabId) ?? TABS[0]!;
  return (
    <main id="main">
      <h1>Access: {info.data?.name ?? group}</h1>
      <p className="muted">
        Group <code>{group}</code> · <Link to={`/webhooks/${group}`}>Webhooks</Link> ·{" "}
        <Link to="/access">Other groups</Link>
      </p>
      <ApiError error={info.error} />
      <nav className="tabs" aria-label="Access sections">
        <ul>
          {TABS.map((t) => (
            <li key={t.id}>
              <Link to={`/access/${group}?tab=${t.id}`} aria-current={t.id === tab.id ? "page" : undefined}>
                {t.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <tab.Section key={tab.id} group={group} />
    </main>
  );
}
