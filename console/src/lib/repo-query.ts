// Which repositories the group page shows: the server pages and sorts; a name search filters
// all of the group's repositories here, since the API's `name` filter is exact.

/** The sort orders offered, as the API's `order_by`. */
export const REPO_SORTS = [
  { value: "name asc", label: "Name (A–Z)" },
  { value: "name desc", label: "Name (Z–A)" },
  { value: "update_time desc", label: "Recently updated" },
  { value: "create_time desc", label: "Newest" },
] as const;

/** Repositories per page. */
export const REPO_PAGE_SIZE = 20;

/** The page's query, from the location's search parameters (bad values fall back to defaults). */
export interface RepoQuery {
  search: string;
  sort: string;
  /** 0-based. */
  page: number;
}

/** Reads `?q=&sort=&page=` (page 1-based in the URL). */
export function parseRepoQuery(params: URLSearchParams): RepoQuery {
  const sort = params.get("sort") ?? "";
  const page = Number.parseInt(params.get("page") ?? "1", 10);
  return {
    search: (params.get("q") ?? "").trim(),
    sort: REPO_SORTS.some((s) => s.value === sort) ? sort : REPO_SORTS[0].value,
    page: Number.isFinite(page) && page > 1 ? page - 1 : 0,
  };
}

/** The search string of `query` (defaults left out), e.g. `?q=app&page=2`. */
export function repoQueryString(query: RepoQuery): string {
  const params = new URLSearchParams();
  if (query.search) params.set("q", query.search);
  if (query.sort !== REPO_SORTS[0].value) params.set("sort", query.sort);
  if (query.page > 0) params.set("page", String(query.page + 1));
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** Names containing `search`, case-insensitively; every item when `search` is empty. */
export function matchingNames<T extends { name: string }>(items: readonly T[], search: string): T[] {
  const needle = search.toLowerCase();
  return needle ? items.filter((i) => i.name.toLowerCase().includes(needle)) : [...items];
}
