import { pathWithUid } from "../../lib/format";
import { Link } from "../../lib/router";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";
import { Panel } from "./panel";

/** How many repositories the organization holds at any depth (ListRepos' totalCount), with a link to them. */
export function ReposPanel({ org }: { org: string }) {
  const client = useClient();
  const repos = useQuery(async () => {
    const page = await client.registry.repos.listRepos({ uidp: { descendantsOf: org }, pageSize: 1 });
    return Number(page.totalCount ?? page.repos.length);
  }, [client, org]);
  return (
    <Panel
      title="Repositories"
      query={repos}
      deniedText="Listing repositories needs a role in this organization."
    >
      {(count) => (
        <>
          <p className="dashboard-figure" data-testid="repo-count">
            {count}
          </p>
          <p>
            <Link to={pathWithUid("/groups", org)}>
              {count === 1 ? "Open the repository" : "Open the repositories"}
            </Link>{" "}
            <span className="muted">(folders included)</span>
          </p>
        </>
      )}
    </Panel>
  );
}
