import { listAll } from "wharf/sdk";
import { firstItems } from "../../components/first-items";
import { ancestorUids, formatTime, pathWithUid } from "../../lib/format";
import { Link } from "../../lib/router";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";
import { DAY_MS, EOL_NEAR_DAYS, eolRowsOf } from "./eol-rows";
import { Panel } from "./panel";

/** Most EOL-matched tags looked through. */
const MAX_EOL_TAGS = 1000;

/**
 * The organization's tags past end of life or within {@link EOL_NEAR_DAYS} days of it (v1
 * ListEolTags, which knows the tags that an EOL rule matches), past first, then soonest.
 */
export function EolPanel({ org }: { org: string }) {
  const client = useClient();
  const tags = useQuery(async () => {
    const { items, more } = await firstItems(
      listAll(client.registryV1.registry.listEolTags, { uidp: { descendantsOf: org }, pageSize: 200n }),
      MAX_EOL_TAGS,
    );
    const rows = eolRowsOf(items, Date.now());
    const repoUids = [...new Set(rows.map((r) => r.repoUid))];
    if (repoUids.length > 0) {
      // Image paths (acme/team/app): the repos' names and those of their groups, by two Lists of uids.
      const names = new Map<string, string>();
      for await (const repo of listAll(client.registry.repos.listRepos, { uidp: { ids: repoUids } })) {
        names.set(repo.uid, repo.name);
      }
      const groupUids = [...new Set(repoUids.flatMap((uid) => ancestorUids(uid)))];
      for await (const g of listAll(client.iam.groups.listGroups, { uidp: { ids: groupUids } })) {
        names.set(g.uid, g.name);
      }
      const pathOf = (uid: string) => [...ancestorUids(uid), uid].map((u) => names.get(u) ?? u).join("/");
      for (const r of rows) r.repo = names.has(r.repoUid) ? pathOf(r.repoUid) : r.repoUid;
    }
    return { rows, more };
  }, [client, org]);
  return (
    <Panel title="End of life" query={tags} wide deniedText="Listing tags needs a role in this organization.">
      {({ rows, more }) =>
        rows.length === 0 ? (
          <p className="muted" data-testid="eol-none">
            No tag is past its end of life or within {EOL_NEAR_DAYS} days of it.
          </p>
        ) : (
          <>
            <div className="table-wrap">
              <table>
                <caption className="visually-hidden">Tags past or near end of life</caption>
                <thead>
                  <tr>
                    <th scope="col">Repository</th>
                    <th scope="col">Tag</th>
                    <th scope="col">Release cycle</th>
                    <th scope="col">End of life</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((r) => (
                    <tr key={r.tagUid}>
                      <td>
                        <Link to={pathWithUid("/repos", r.repoUid)}>{r.repo}</Link>
                      </td>
                      <td className="mono">{r.tag}</td>
                      <td>
                        {r.product} {r.cycle}
                      </td>
                      <td>
                        <span className={r.past ? "eol-past" : "eol-near"}>
                          {r.past
                            ? "Past end of life"
                            : `In ${Math.ceil(((r.eolTime ?? 0) - Date.now()) / DAY_MS)} days`}
                        </span>{" "}
                        <span className="muted">
                          {r.eolTime !== undefined
                            ? formatTime(new Date(r.eolTime).toISOString()).slice(0, 10)
                            : "no date"}
                        </span>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            {more && <p className="muted">Looked through the first {MAX_EOL_TAGS} tags with an EOL rule.</p>}
          </>
        )
      }
    </Panel>
  );
}
