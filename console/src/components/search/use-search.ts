import { useEffect, useState } from "react";
import { Code, isWharfApiError, type vulnerabilities, type WharfClient } from "wharf/sdk";
import { advisoryIdOf, type SearchGroup, searchGroups } from "./search-options";

/** How long typing must pause before a request goes out. */
export const SEARCH_DEBOUNCE_MS = 150;
/** Results asked for of each kind. */
const PER_KIND = 5;

/** Where the search for the current text is. */
export type SearchState =
  | { status: "idle" }
  /** `groups`: the previous search's results, shown until this one answers. */
  | { status: "loading"; query: string; groups: SearchGroup[] }
  | { status: "done"; query: string; groups: SearchGroup[] }
  | { status: "error"; query: string; error: unknown };

/**
 * The advisories matching `query`: by id when it is one (`CGA-…`), else by artifact, component or
 * alias. A caller who may not list advisories gets none rather than an error.
 */
async function findAdvisories(
  client: WharfClient,
  query: string,
  signal: AbortSignal,
): Promise<vulnerabilities.Advisory[]> {
  const id = advisoryIdOf(query);
  try {
    const answer = await client.vulnerabilities.advisories.listAdvisories(
      id ? { advisoryIds: [id], pageSize: PER_KIND } : { query, pageSize: PER_KIND },
      { signal },
    );
    return answer.advisories;
  } catch (err) {
    if (isWharfApiError(err) && err.code === Code.PermissionDenied) return [];
    throw err;
  }
}

/**
 * Searches for `text` (trimmed) once typing pauses for {@link SEARCH_DEBOUNCE_MS}: repos, tags
 * and images through SearchService, advisories through ListAdvisories, in parallel. A newer text
 * cancels the requests of the older one, so an answer never shows for text no longer typed.
 */
export function useSearch(client: WharfClient, text: string): SearchState {
  const query = text.trim();
  const [state, setState] = useState<SearchState>({ status: "idle" });
  useEffect(() => {
    if (query === "") {
      setState({ status: "idle" });
      return;
    }
    setState((previous) => ({
      status: "loading",
      query,
      groups: previous.status === "done" || previous.status === "loading" ? previous.groups : [],
    }));
    const controller = new AbortController();
    const { signal } = controller;
    const timer = setTimeout(() => {
      Promise.all([
        client.registry.search.search({ query, pageSize: PER_KIND }, { signal }),
        findAdvisories(client, query, signal),
      ]).then(
        ([found, advisories]) => {
          if (!signal.aborted) setState({ status: "done", query, groups: searchGroups(found, advisories) });
        },
        (error: unknown) => {
          if (!signal.aborted) setState({ status: "error", query, error });
        },
      );
    }, SEARCH_DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [client, query]);
  return state;
}
