import { listAll } from "wharf/sdk";
import { Link } from "../lib/router";
import { useQuery } from "../lib/use-query";
import { useClient } from "../lib/wharf-context";
import { ApiError } from "./api-error";
import { EmptyState } from "./empty-state";
import { firstItems } from "./first-items";
import { Loading } from "./loading";

/** Most groups the chooser lists. */
const MAX_GROUPS = 200;

/**
 * The groups the caller may see, each a link to `<basePath>/<group uid>`: how a per-group page
 * (access, webhooks) starts when no group is in its path.
 */
export function GroupChoice({ basePath, purpose }: { basePath: string; purpose: string }) {
  const client = useClient();
  const groups = useQuery(() => firstItems(listAll(client.iam.groups.listGroups, {}), MAX_GROUPS), [client]);
  if (groups.loading && !groups.data) return <Loading what="Loading groups" />;
  if (groups.error) return <ApiError error={groups.error} />;
  const list = groups.data?.items ?? [];
  if (list.length === 0) {
    return (
      <EmptyState title="No organizations yet">
        <p>
          Create an organization first (<code>wharf iam groups create --name acme</code>), or ask an
          organization's owner for an invite.
        </p>
      </EmptyState>
    );
  }
  return (
    <nav aria-label={`Groups: ${purpose}`}>
      <p>Choose a group {purpose}:</p>
      <ul className="group-choice">
        {list.map((g) => (
          <li key={g.uid}>
            <Link to={`${basePath}/${g.uid}`}>{g.name}</Link> <code className="muted">{g.uid}</code>
          </li>
        ))}
      </ul>
      {groups.data?.more && <p className="muted">Showing the first {MAX_GROUPS} groups.</p>}
    </nav>
  );
}
