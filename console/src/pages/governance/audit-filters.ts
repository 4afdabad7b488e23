/** The audit log's filters, as kept in the page's query string (so a filtered view can be shared). */
export interface AuditFilters {
  /** An organization (or any group) uid; "" for every group the caller may audit. */
  org: string;
  /** An identity uid. */
  actor: string;
  action: string;
  resource: string;
  /** "", OK, DENIED or FAILED. */
  result: string;
  /** RFC 3339, or "". */
  start: string;
  /** RFC 3339, or "". */
  end: string;
}

const KEYS = ["org", "actor", "action", "resource", "result", "start", "end"] as const;

/** The filters of a query string (missing ones ""). */
export function filtersFromSearch(search: URLSearchParams): AuditFilters {
  const filters = {} as AuditFilters;
  for (const key of KEYS) filters[key] = search.get(key)?.trim() ?? "";
  return filters;
}

/** The query string (with `?`, or "") holding the filters that are set, in a fixed order. */
export function searchFromFilters(filters: AuditFilters): string {
  const search = new URLSearchParams();
  for (const key of KEYS) if (filters[key].trim()) search.set(key, filters[key].trim());
  const text = search.toString();
  return text ? `?${text}` : "";
}

/** The ListRecords request of the filters, for one page. */
export function recordsRequest(filters: AuditFilters, pageToken: string, pageSize: number) {
  return {
    ...(filters.org ? { uidp: { descendantsOf: filters.org } } : {}),
    actor: filters.actor,
    action: filters.action,
    resource: filters.resource,
    result: filters.result,
    start: filters.start,
    end: filters.end,
    pageSize,
    pageToken,
  };
}

/**
 * A `datetime-local` input's value (`2026-11-29T20:05`, read as UTC) as RFC 3339
 * (`2026-11-29T20:05:00Z`); anything else is passed on as typed for the server to judge.
 */
export function instantFromInput(value: string): string {
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(value)) return `${value}:00Z`;
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(value)) return `${value}Z`;
  return value;
}

/** An RFC 3339 time in UTC as a `datetime-local` value (minutes); "" when it is no such time. */
export function inputFromInstant(value: string): string {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(:\d{2}(\.\d+)?)?Z$/.exec(value);
  return m ? (m[1] as string) : "";
}
