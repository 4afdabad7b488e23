import { listAll } from "wharf/sdk";
import { firstItems } from "../../components/first-items";
import { formatTime, pathWithUid, toDate } from "../../lib/format";
import { Link } from "../../lib/router";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";
import { Panel } from "./panel";

/** A tag whose end of life is this close (or past) is shown. */
export const EOL_NEAR_DAYS = 90;
/** Most EOL-matched tags looked through. */
const MAX_EOL_TAGS = 1000;
const DAY_MS = 86_400_000;

/** A tag of the panel: where its release cycle stands. */
export interface EolRow {
  tagUid: string;
  repoUid: string;
  repo: string;
  tag: string;
  product: string;
  cycle: string;
  /** The cycle's EOL date (ms), undefined when declared EOL without a date. */
  eolTime: number | undefined;
  past: boolean;
}

/** The parent repo uid of a tag uid (`<repo uid>/<16 hex>`). */
function repoOf(tagUid: string): string {
  return tagUid.slice(0, tagUid.lastIndexOf("/"));
}

/**
 * The organization's tags past end of life or within {@link EOL_NEAR_DAYS} days of it (v1
 * ListEolTags, which knows the tags that an EOL rule matches), past first, then soonest.
 */
export function EolPanel({ org }: { org: string }) {
  const client = useClient();
  const tags = useQuery(async () => {
    const now = Date.now();
    const { items, more } = await firstItems(
      listAll(client.registryV1.registry.listEolTags, { uidp: { descendantsOf: org }, pageSize: 200n }),
      MAX_EOL_TAGS,
    );
    const rows: EolRow[] = [];
    for (const t of items) {
      const version = t.mainPackageVersion;
      if (!version?.exists) continue;
      const eolTime = toDate(version.eolDate)?.getTime();
      const past = version.eolBroken || (eolTime !== undefined && eolTime <= now);
      if (!past && (eolTime === undefined || eolTime - now > EOL_NEAR_DAYS * DAY_MS)) continue;
      rows.push({
        tagUid: t.id,
        repoUid: repoOf(t.id),
        repo: repoOf(t.id),
        tag: t.name,
        product: t.mainPackageName,
        cycle: version.version,
        eolTime,
        past,
      });
    }
    const repoUids = [...new Set(rows.map((r) => r.repoUid))];
    if (repoUids.length > 0) {
      const names = new Map<string, string>();
      for await (const repo of listAll(client.registry.repos.listRepos, { uidp: { ids: repoUids } })) {
        names.set(repo.uid, repo.name);
      }
      for (const r of rows) r.repo = names.get(r.repoUid) ?? r.repoUid;
    }
    rows.sort((a, b) => Number(b.past) - Number(a.past) || (a.eolTime ?? 0) - (b.eolTime ?? 0));
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
