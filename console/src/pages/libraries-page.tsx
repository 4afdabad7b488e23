import { type FormEvent, useState } from "react";
import { ApiError } from "../components/api-error";
import { CheckboxField } from "../components/checkbox-field";
import { EmptyState } from "../components/empty-state";
import { Loading } from "../components/loading";
import { TokenPager } from "../components/token-pager";
import { formatBytes, formatTime } from "../lib/format";
import { useQuery } from "../lib/use-query";
import { useTokenPages } from "../lib/use-token-pages";
import { useClient } from "../lib/wharf-context";

/** The catalogue's ecosystems (Ecosystem numbers). */
const ECOSYSTEMS = [
  { value: 1, label: "Java" },
  { value: 2, label: "Python" },
  { value: 3, label: "JavaScript" },
] as const;

/** The library catalogue by ecosystem: search, remediated filter, and each artifact's versions. */
export default function LibrariesPage() {
  const client = useClient();
  const [ecosystem, setEcosystem] = useState<1 | 2 | 3>(1);
  const [draft, setDraft] = useState({ query: "", remediated: false });
  const [filters, setFilters] = useState(draft);
  const [opened, setOpened] = useState<string>();
  const pages = useTokenPages();
  const counts = useQuery(() => client.libraries.artifacts.countArtifacts({}), [client]);
  const list = useQuery(
    () =>
      client.libraries.artifacts.listArtifacts({
        ecosystems: [ecosystem],
        query: filters.query,
        remediated: filters.remediated,
        pageSize: 50,
        pageToken: pages.token,
      }),
    [client, ecosystem, filters, pages.token],
  );
  const countOf = (value: number) => counts.data?.counts.find((c) => c.ecosystem === value)?.totalCount;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    pages.reset();
    setFilters({ ...draft, query: draft.query.trim() });
  };
  return (
    <main id="main">
      <h1>Libraries</h1>
      <div role="tablist" aria-label="Ecosystems" className="tabs">
        {ECOSYSTEMS.map((e) => (
          <button
            key={e.value}
            type="button"
            role="tab"
            aria-selected={e.value === ecosystem}
            className={e.value === ecosystem ? "" : "secondary"}
            onClick={() => {
              setEcosystem(e.value);
              pages.reset();
            }}
          >
            {e.label}
            {countOf(e.value) !== undefined && ` (${String(countOf(e.value))})`}
          </button>
        ))}
      </div>
      <search>
        <form className="toolbar" onSubmit={submit}>
          <div className="field">
            <label htmlFor="lib-query">Name contains</label>
            <input
              id="lib-query"
              value={draft.query}
              onChange={(e) => setDraft({ ...draft, query: e.target.value })}
              spellCheck={false}
            />
          </div>
          <CheckboxField
            label="With remediated builds only"
            checked={draft.remediated}
            onChange={(checked) => setDraft({ ...draft, remediated: checked })}
          />
          <button type="submit">Search</button>
        </form>
      </search>
      <ApiError error={list.error ?? counts.error} />
      {list.loading && !list.data && <Loading what="Loading libraries" />}
      {list.data?.artifacts.length === 0 && (
        <EmptyState title="No library matches">
          <p>Try another ecosystem or name, or import the libraries catalogue into this server.</p>
        </EmptyState>
      )}
      {list.data && list.data.artifacts.length > 0 && (
        <>
          <ul className="artifacts">
            {list.data.artifacts.map((a) => (
              <li key={a.uid}>
                <button
                  type="button"
                  className="link-button"
                  aria-expanded={opened === a.uid}
                  onClick={() => setOpened(opened === a.uid ? undefined : a.uid)}
                >
                  {a.name}
                </button>{" "}
                <span className="muted">
                  latest {a.latestVersion}, {a.versionCount} versions
                </span>
                {a.description && <div className="small-text">{a.description}</div>}
                {opened === a.uid && <Versions artifactId={a.uid} />}
              </li>
            ))}
          </ul>
          <TokenPager pages={pages} nextToken={list.data.nextPageToken} />
        </>
      )}
    </main>
  );
}

function Versions({ artifactId }: { artifactId: string }) {
  const client = useClient();
  const versions = useQuery(
    () => client.libraries.artifacts.listArtifactVersions({ artifactId, pageSize: 50 }),
    [client, artifactId],
  );
  if (versions.error) return <ApiError error={versions.error} />;
  if (!versions.data) return <Loading what="Loading versions" />;
  return (
    <table className="versions">
      <caption className="visually-hidden">Versions, newest first</caption>
      <thead>
        <tr>
          <th scope="col">Version</th>
          <th scope="col">Published</th>
          <th scope="col">Size</th>
        </tr>
      </thead>
      <tbody>
        {versions.data.artifactVersions.map((v) => (
          <tr key={v.uid}>
            <td className="mono">{v.version}</td>
            <td>{formatTime(v.createTime)}</td>
            <td>{formatBytes(v.sizeBytes)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
