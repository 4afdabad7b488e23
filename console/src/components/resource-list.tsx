import type { ReactNode } from "react";
import type { Query } from "../lib/use-query";
import { ApiError } from "./api-error";
import { Loading } from "./loading";

/** A bounded list as the console's lists load it (see firstItems). */
export interface ListedItems<T> {
  items: T[];
  /** True when more items exist than were loaded. */
  more: boolean;
}

/**
 * The one way a list of resources shows: "loading" until the first answer, the server's error,
 * `empty` (what to do next) when there are no items, else a table with `columns` and one
 * `row(item)` per item, and a note when only the first items were loaded.
 */
export function ResourceList<T>({
  query,
  what,
  columns,
  empty,
  row,
}: {
  query: Query<ListedItems<T>>;
  /** Plural, lowercase: `identities`; names the loading line and the table's caption. */
  what: string;
  columns: readonly string[];
  empty: ReactNode;
  row: (item: T) => ReactNode;
}) {
  const { data, error, loading } = query;
  return (
    <>
      {loading && !data && <Loading what={`Loading ${what}`} />}
      <ApiError error={error} />
      {data && data.items.length === 0 && empty}
      {data && data.items.length > 0 && (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">{what}</caption>
            <thead>
              <tr>
                {columns.map((c) => (
                  <th key={c} scope="col">
                    {c}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>{data.items.map(row)}</tbody>
          </table>
        </div>
      )}
      {data?.more && (
        <p className="muted">
          Showing the first {data.items.length} {what}.
        </p>
      )}
    </>
  );
}
