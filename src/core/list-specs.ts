import type { ListSpec, Page } from "./list.js";

/** Rows of resources that have a name and both timestamps. */
export interface NamedRow {
  uid: string;
  name: string;
  createTime: number;
  updateTime: number;
}

/** Paging of named resources: order by uid (default), name, create or update time. */
export function namedResourceList<T extends NamedRow>(): ListSpec<T> {
  return {
    allowedOrder: ["uid", "name", "create_time", "update_time"],
    defaultOrder: { field: "uid", desc: false },
    sortValue: (row, field) =>
      field === "name"
        ? row.name
        : field === "create_time"
          ? row.createTime
          : field === "update_time"
            ? row.updateTime
            : row.uid,
    uidOf: (row) => row.uid,
  };
}

/** The envelope fields every List response shares, from a page. */
export function pageEnvelope(page: Page<unknown>): {
  nextPageToken: string;
  totalCount: bigint;
  skipped: number;
} {
  return { nextPageToken: page.nextPageToken, totalCount: page.totalCount, skipped: page.skipped };
}
