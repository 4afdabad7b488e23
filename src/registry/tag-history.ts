import type { TagHistoryRow } from "../storage/registry-store.js";
import type { Store } from "../storage/store.js";

/** Most records one tag history answer holds (the Tag History API's rule); page by moving `start`. */
export const HISTORY_PAGE_SIZE = 1000;

/**
 * One answer of a tag's history, as both the registry's Tag History API and the v1
 * ListTagHistory serve it: every digest tag `tagName` of `repoUid` pointed to, oldest first,
 * `start` inclusive and `end` exclusive (ms), at most HISTORY_PAGE_SIZE records. A record with an
 * empty digest is a delete.
 */
export function tagHistoryPage(
  store: Pick<Store, "tags">,
  args: { repoUid: string; tagName: string; start?: number | undefined; end?: number | undefined },
): Promise<TagHistoryRow[]> {
  return store.tags.history({
    repoUid: args.repoUid,
    tagName: args.tagName,
    ...(args.start === undefined ? {} : { start: args.start }),
    ...(args.end === undefined ? {} : { end: args.end }),
    limit: HISTORY_PAGE_SIZE,
  });
}
