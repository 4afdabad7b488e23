import { type FormEvent, useState } from "react";
import { ApiError } from "../components/api-error";
import { CheckboxField } from "../components/checkbox-field";
import { EmptyState } from "../components/empty-state";
import { Loading } from "../components/loading";
import { ChoiceField } from "../components/select-field";
import { TokenPager } from "../components/token-pager";
import { formatTime } from "../lib/format";
import { useSearchParams } from "../lib/router";
import { useQuery } from "../lib/use-query";
import { useTokenPages } from "../lib/use-token-pages";
import { useClient } from "../lib/wharf-context";

/** The latest-event filters offered (EventTypeFilter numbers). */
const EVENT_TYPES = [
  { value: 0, label: "Any" },
  { value: 1, label: "Detection" },
  { value: 2, label: "True positive" },
  { value: 3, label: "Fixed" },
  { value: 4, label: "False positive" },
  { value: 5, label: "Analysis not planned" },
  { value: 6, label: "Fix not planned" },
  { value: 7, label: "Pending upstream fix" },
  { value: 8, label: "Patched" },
] as const;

const ARTIFACT_TYPES = ["", "apk", "os-package", "library", "image"] as const;

interface Filters {
  query: string;
  /** An exact advisory id (`CGA-…`); the search box links here with `?id=`. */
  advisoryId: string;
  artifact: string;
  alias: string;
  artifactType: string;
  latestEvent: number;
  showDeleted: boolean;
}

const NO_FILTERS: Filters = {
  query: "",
  advisoryId: "",
  artifact: "",
  alias: "",
  artifactType: "",
  latestEvent: 0,
  showDeleted: false,
};

/** The filters the page opens with: none, or `?query=` and `?id=` of the URL. */
function filtersFrom(params: URLSearchParams): Filters {
  return { ...NO_FILTERS, query: params.get("query") ?? "", advisoryId: params.get("id") ?? "" };
}

/** Security advisories: search with the main filters, newest first, paged. */
export default function AdvisoriesPage() {
  const client = useClient();
  const params = useSearchParams();
  const [draft, setDraft] = useState<Filters>(() => filtersFrom(params));
  const [filters, setFilters] = useState<Filters>(() => filtersFrom(params));
  const pages = useTokenPages();
  // The search box can link here again with other parameters: the page stays, its filters follow.
  const [fromUrl, setFromUrl] = useState(params.toString());
  if (params.toString() !== fromUrl) {
    setFromUrl(params.toString());
    setDraft(filtersFrom(params));
    setFilters(filtersFrom(params));
    pages.reset();
  }
  const list = useQuery(
    () =>
      client.vulnerabilities.advisories.listAdvisories({
        query: filters.query,
        advisoryIds: filters.advisoryId ? [filters.advisoryId] : [],
        artifactNames: filters.artifact ? [filters.artifact] : [],
        aliases: filters.alias ? [filters.alias] : [],
        artifactTypes: filters.artifactType ? [filters.artifactType] : [],
        latestEventType: filters.latestEvent as 0,
        showDeleted: filters.showDeleted,
        orderBy: "update_time desc",
        pageSize: 50,
        pageToken: pages.token,
      }),
    [client, filters, pages.token],
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    pages.reset();
    setFilters({
      ...draft,
      query: draft.query.trim(),
      advisoryId: draft.advisoryId.trim(),
      artifact: draft.artifact.trim(),
      alias: draft.alias.trim(),
    });
  };
  const text = (key: "query" | "advisoryId" | "artifact" | "alias", label: string) => (
    <div className="field">
      <label htmlFor={`adv-${key}`}>{label}</label>
      <input
        id={`adv-${key}`}
        value={draft[key]}
        onChange={(e) => setDraft({ ...draft, [key]: e.target.value })}
        spellCheck={false}
      />
    </div>
  );
  return (
    <main id="main">
      <h1>Security advisories</h1>
      <search>
        <form className="toolbar" onSubmit={submit}>
          {text("query", "Search (artifact, component or alias)")}
          {text("advisoryId", "Advisory id (CGA-…)")}
          {text("artifact", "Artifact name")}
          {text("alias", "Alias (CVE-…, GHSA-…)")}
          <ChoiceField
            label="Artifact type"
            value={draft.artifactType}
            choices={ARTIFACT_TYPES.map((t) => ({ value: t, label: t || "Any" }))}
            onChange={(artifactType) => setDraft({ ...draft, artifactType })}
          />
          <ChoiceField
            label="Latest event"
            value={String(draft.latestEvent)}
            choices={EVENT_TYPES.map((t) => ({ value: String(t.value), label: t.label }))}
            onChange={(latestEvent) => setDraft({ ...draft, latestEvent: Number(latestEvent) })}
          />
          <CheckboxField
            label="Include withdrawn"
            checked={draft.showDeleted}
            onChange={(checked) => setDraft({ ...draft, showDeleted: checked })}
          />
          <button type="submit">Search</button>
        </form>
      </search>
      <ApiError error={list.error} />
      {list.loading && !list.data && <Loading what="Loading advisories" />}
      {list.data?.advisories.length === 0 && (
        <EmptyState title="No advisory matches">
          <p>
            Loosen the filters, or import advisories into this server (see the advisory feed in the API docs).
          </p>
        </EmptyState>
      )}
      {list.data && list.data.advisories.length > 0 && (
        <>
          <p className="muted">{String(list.data.totalCount ?? "")} advisories</p>
          <div className="table-wrap">
            <table>
              <caption className="visually-hidden">Advisories</caption>
              <thead>
                <tr>
                  <th scope="col">Advisory</th>
                  <th scope="col">Artifact</th>
                  <th scope="col">Component</th>
                  <th scope="col">Aliases</th>
                  <th scope="col">Updated</th>
                </tr>
              </thead>
              <tbody>
                {list.data.advisories.map((a) => (
                  <tr key={a.uid}>
                    <td className="mono">
                      {a.advisoryId}
                      {a.deleteTime && <span className="badge">withdrawn</span>}
                    </td>
                    <td>
                      {a.artifactName} <span className="muted">{a.artifactType}</span>
                    </td>
                    <td>{a.componentName}</td>
                    <td>{a.aliases.join(", ")}</td>
                    <td>{formatTime(a.updateTime)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <TokenPager pages={pages} nextToken={list.data.nextPageToken} />
        </>
      )}
    </main>
  );
}
