import { invalidArgument } from "../../core/errors.js";
import type { ServiceHandlers } from "../../core/service.js";
import { Capability } from "../../gen/platform/capabilities/capabilities_pb.js";
import type { SearchService } from "../../gen/platform/registry/v2/search_pb.js";
import type { Store } from "../../storage/store.js";
import { repoMessage, tagMessage } from "../mapping.js";

/** What SearchService is built from (the composition root provides it). */
export interface SearchServiceDeps {
  store: Pick<Store, "search">;
}

/** Results of each kind when the request names no page size. */
export const DEFAULT_SEARCH_SIZE = 10;
/** The most results of each kind. */
export const MAX_SEARCH_SIZE = 50;
/** The longest query (the longest image path). */
export const MAX_QUERY_LENGTH = 255;

/** `sha256:` (optional) and 4-64 hex digits, any case. */
const DIGEST_PREFIX = /^(?:sha256:)?([0-9a-f]{4,64})$/i;

/** The digest prefix `query` names (`sha256:<lowercase hex>`), or undefined when it names none. */
export function digestPrefixOf(query: string): string | undefined {
  const hex = DIGEST_PREFIX.exec(query)?.[1];
  return hex === undefined ? undefined : `sha256:${hex.toLowerCase()}`;
}

/**
 * SearchService.Search (ADR 0063): repos by image path, tags by name (case-insensitive substrings,
 * wildcards literal) and images by digest prefix, in the repos under the caller's repo.list
 * scopes only (as ListRepos resolves them). INVALID_ARGUMENT naming `query` when it is empty or
 * longer than {@link MAX_QUERY_LENGTH} once trimmed, naming `page_size` when it is negative.
 */
export function createSearchService(deps: SearchServiceDeps): ServiceHandlers<typeof SearchService> {
  return {
    async search(req, ctx) {
      const text = req.query.trim();
      if (text === "") throw invalidArgument("query", "is required");
      if (text.length > MAX_QUERY_LENGTH)
        throw invalidArgument("query", `must be at most ${MAX_QUERY_LENGTH} characters`);
      if (req.pageSize < 0) throw invalidArgument("page_size", "must not be negative");
      const limit = req.pageSize === 0 ? DEFAULT_SEARCH_SIZE : Math.min(req.pageSize, MAX_SEARCH_SIZE);
      const within = await ctx.access.scopesWith([Capability.CAP_REPO_LIST]);
      const digestPrefix = digestPrefixOf(text);
      const hits = await deps.store.search.search({
        text,
        limit,
        within,
        ...(digestPrefix === undefined ? {} : { digestPrefix }),
      });
      return {
        repos: hits.repos.map((h) => ({ repo: repoMessage(h.repo), repoPath: h.path })),
        tags: hits.tags.map((h) => ({
          tag: tagMessage(h.tag),
          repoUid: h.tag.repoUid,
          repoPath: h.repoPath,
        })),
        images: hits.images.map((h) => ({
          digest: h.digest,
          repoUid: h.repoUid,
          repoPath: h.repoPath,
          tags: h.tags,
        })),
        truncated: hits.truncated,
      };
    },
  };
}
