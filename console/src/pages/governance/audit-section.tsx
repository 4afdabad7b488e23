import { type FormEvent, useState } from "react";
import { type audit, listAll } from "wharf/sdk";
import { ApiError, TextField } from "../../components/api-error";
import { EmptyState } from "../../components/empty-state";
import { firstItems } from "../../components/first-items";
import { Loading } from "../../components/loading";
import { ChoiceField } from "../../components/select-field";
import { TimeText } from "../../components/time-text";
import { TokenPager } from "../../components/token-pager";
import { useNavigate, useSearchParams } from "../../lib/router";
import { useQuery } from "../../lib/use-query";
import { useTokenPages } from "../../lib/use-token-pages";
import { useClient } from "../../lib/wharf-context";
import {
  type AuditFilters,
  filtersFromSearch,
  inputFromInstant,
  instantFromInput,
  recordsRequest,
  searchFromFilters,
} from "./audit-filters";

const PAGE_SIZE = 50;
const MAX_ORGANIZATIONS = 200;
const RESULTS = [
  { value: "", label: "Any result" },
  { value: "OK", label: "OK" },
  { value: "DENIED", label: "Denied" },
  { value: "FAILED", label: "Failed" },
];

/**
 * The audit log, newest first, filtered by the query string's filters (organization, actor,
 * action, resource, result, start/end) and paged by page token. A caller without audit.list sees
 * the API's refusal.
 */
export default function AuditSection() {
  const search = useSearchParams();
  const filters = filtersFromSearch(search);
  const key = searchFromFilters(filters);
  return (
    <section aria-labelledby="audit-heading">
      <h2 id="audit-heading">Audit log</h2>
      <FilterForm key={`form${key}`} filters={filters} />
      <Records key={`records${key}`} filters={filters} />
    </section>
  );
}

function FilterForm({ filters }: { filters: AuditFilters }) {
  const client = useClient();
  const navigate = useNavigate();
  const orgs = useQuery(
    () => firstItems(listAll(client.iam.groups.listGroups, { uidp: { inRoot: true } }), MAX_ORGANIZATIONS),
    [client],
  );
  const [draft, setDraft] = useState<AuditFilters>({
    ...filters,
    start: inputFromInstant(filters.start) || filters.start,
    end: inputFromInstant(filters.end) || filters.end,
  });
  const set = (change: Partial<AuditFilters>) => setDraft((d) => ({ ...d, ...change }));
  const apply = (event: FormEvent) => {
    event.preventDefault();
    const next = { ...draft, start: instantFromInput(draft.start), end: instantFromInput(draft.end) };
    navigate(`/governance/audit${searchFromFilters(next)}`);
  };
  const orgChoices = [
    { value: "", label: "Every organization I may audit" },
    ...(orgs.data?.items ?? []).map((g) => ({ value: g.uid, label: g.name })),
  ];
  // A shared link may name an organization this list does not hold: keep it choosable.
  if (filters.org && !orgChoices.some((c) => c.value === filters.org)) {
    orgChoices.push({ value: filters.org, label: filters.org });
  }
  return (
    <form className="card audit-filters" onSubmit={apply} aria-label="Audit filters">
      <div className="filter-grid">
        <ChoiceField
          label="Organization"
          value={draft.org}
          choices={orgChoices}
          onChange={(org) => set({ org })}
        />
        <TextField
          label="Actor (identity uid)"
          field="actor"
          error={undefined}
          value={draft.actor}
          onChange={(e) => set({ actor: e.target.value })}
          spellCheck={false}
        />
        <TextField
          label="Action"
          field="action"
          error={undefined}
          value={draft.action}
          onChange={(e) => set({ action: e.target.value })}
          placeholder="registry.push"
          spellCheck={false}
        />
        <TextField
          label="Resource"
          field="resource"
          error={undefined}
          value={draft.resource}
          onChange={(e) => set({ resource: e.target.value })}
          placeholder="a uid, or acme/app:latest"
          spellCheck={false}
        />
        <ChoiceField
          label="Result"
          value={draft.result}
          choices={RESULTS}
          onChange={(result) => set({ result })}
        />
        <TextField
          label="From (UTC)"
          field="start"
          error={undefined}
          type="datetime-local"
          value={draft.start}
          onChange={(e) => set({ start: e.target.value })}
        />
        <TextField
          label="Until (UTC)"
          field="end"
          error={undefined}
          type="datetime-local"
          value={draft.end}
          onChange={(e) => set({ end: e.target.value })}
        />
      </div>
      <ApiError error={orgs.error} />
      <div className="button-row">
        <button type="submit">Apply filters</button>
        <button type="button" className="secondary" onClick={() => navigate("/governance/audit")}>
          Clear filters
        </button>
      </div>
    </form>
  );
}

function Records({ filters }: { filters: AuditFilters }) {
  const client = useClient();
  const pages = useTokenPages();
  const records = useQuery(
    () => client.audit.log.listRecords(recordsRequest(filters, pages.token, PAGE_SIZE)),
    [client, pages.token],
  );
  const rows = records.data?.records ?? [];
  return (
    <div aria-live="polite" aria-busy={records.loading}>
      {records.loading && !records.data && <Loading what="Loading audit records" />}
      <ApiError error={records.error} />
      {records.data && rows.length === 0 && (
        <EmptyState title="No audit records">
          <p>Nothing recorded matches these filters.</p>
        </EmptyState>
      )}
      {rows.length > 0 && (
        // Focusable, so that a keyboard can scroll it when long values overflow a narrow screen.
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must take focus (WCAG 2.1.1).
        <section className="table-wrap" tabIndex={0} aria-label="Audit records">
          <table>
            <caption className="visually-hidden">Audit records, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Actor</th>
                <th scope="col">Action</th>
                <th scope="col">Resource</th>
                <th scope="col">Result</th>
                <th scope="col">Source</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <RecordRow key={r.uid} record={r} />
              ))}
            </tbody>
          </table>
        </section>
      )}
      {records.data && (rows.length > 0 || pages.page > 1) && (
        <TokenPager pages={pages} nextToken={records.data.nextPageToken} />
      )}
    </div>
  );
}

const RESULT_CLASS: Record<string, string> = { OK: "ok", DENIED: "danger", FAILED: "warn" };

function RecordRow({ record }: { record: audit.AuditRecord }) {
  const code = record.result?.code ?? "";
  return (
    <tr data-testid="audit-record">
      <td>
        <TimeText value={record.time} />
      </td>
      <td className="mono wrap">
        {record.actor?.identity || <span className="muted">anonymous</span>}
        {record.actor?.act?.sub && <div className="caps">via {record.actor.act.sub}</div>}
      </td>
      <td className="mono">
        <ActionText action={record.action} />
      </td>
      <td className="mono wrap">{record.resource}</td>
      <td>
        <span className={`badge ${RESULT_CLASS[code] ?? ""}`}>{code}</span>
        {record.result?.reason && <div className="caps">{record.result.reason}</div>}
      </td>
      <td>
        {record.sourceAddress}
        {record.userAgent && <div className="caps">{record.userAgent}</div>}
      </td>
    </tr>
  );
}

/** An RPC's full name as its method, the service under it (`registry.push` as it is). */
function ActionText({ action }: { action: string }) {
  const slash = action.lastIndexOf("/");
  if (slash < 0) return <span>{action}</span>;
  return (
    <>
      <span title={action}>{action.slice(slash + 1)}</span>
      <div className="caps wrap">{action.slice(0, slash)}</div>
    </>
  );
}
