import { allV2Pages } from "../../core/v1-face.js";

/** The page size a v1 list asks the v2 list for while gathering every page (the v2 maximum). */
export const V2_PAGE_SIZE = 200;

/** The paging fields of one v2 list request. */
export interface V2Paging {
  pageSize: number;
  pageToken: string;
}

/**
 * Every item of a v2 list, for an unpaged v1 list (`allV2Pages`, so past MAX_V1_LIST_ITEMS it
 * fails naming `v2Path`): `fetchPage` runs the v2 list handler with `paging` spread into its
 * request, and `itemsOf` picks the answer's list field.
 */
export function everyV2Item<P extends { nextPageToken?: string }, T>(
  v2Path: string,
  fetchPage: (paging: V2Paging) => Promise<P>,
  itemsOf: (page: P) => T[] | undefined,
): Promise<T[]> {
  return allV2Pages(v2Path, async (pageToken) => {
    const page = await fetchPage({ pageSize: V2_PAGE_SIZE, pageToken });
    return { items: itemsOf(page) ?? [], nextPageToken: page.nextPageToken ?? "" };
  });
}
