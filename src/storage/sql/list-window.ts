import { type SelectQueryBuilder, sql } from "kysely";
import { invalidArgument } from "../../core/errors.js";
import type { ListSlice, ListWindow, SortField } from "../../core/list.js";
import { keysetAfter, type Predicate } from "./predicates.js";

/** The column behind each sort field a table supports; `numeric` marks bigint (ms) columns. */
export type SortColumns = Partial<Record<SortField, { column: string; numeric: boolean }>>;

/** Sort columns of a table with uid, name, create_time and update_time. */
export const STANDARD_SORT: SortColumns = {
  uid: { column: "uid", numeric: false },
  name: { column: "name", numeric: false },
  create_time: { column: "create_time", numeric: true },
  update_time: { column: "update_time", numeric: true },
};

/** Sort columns of a table without a name. */
export const TIME_SORT: SortColumns = {
  uid: STANDARD_SORT.uid,
  create_time: STANDARD_SORT.create_time,
  update_time: STANDARD_SORT.update_time,
};

/**
 * Runs one ListWindow over `filtered` (a single-table select with the filter's WHERE applied):
 * ORDER BY (sort column, uid) in the window's direction, the keyset predicate for `after`, OFFSET
 * `skip`, LIMIT `limit + 1`, and COUNT(*) of the filter for `total`. The count is skipped when the
 * rows already prove it (first page, no more rows than fit). An order field the table lacks is
 * INVALID_ARGUMENT on `order_by`.
 */
export async function listWindow<DB, TB extends keyof DB, Raw, Row>(
  filtered: SelectQueryBuilder<DB, TB, object>,
  window: ListWindow,
  sortColumns: SortColumns,
  toRow: (raw: Raw) => Row,
): Promise<ListSlice<Row>> {
  const sort = sortColumns[window.order.field];
  if (sort === undefined) throw invalidArgument("order_by", `cannot order by ${window.order.field}`);
  const direction = window.order.desc ? "desc" : "asc";
  let page = filtered.selectAll();
  if (window.after !== undefined) {
    const after: Predicate = keysetAfter(sort.column, sort.numeric, window.after, window.order.desc);
    page = page.where(after);
  }
  if (sort.column !== "uid") page = page.orderBy(sql.ref(sort.column), direction);
  page = page.orderBy(sql.ref("uid"), direction).limit(window.limit + 1);
  if (window.skip > 0) page = page.offset(window.skip);

  const countable = window.after === undefined;
  const [raws, counted] = await Promise.all([page.execute(), countable ? undefined : count(filtered)]);
  const rows = (raws as unknown as Raw[]).map(toRow);
  let total = counted;
  if (total === undefined) {
    // First page: if every remaining row fit in the window (and the skip did not overshoot), the
    // rows are the count.
    total =
      rows.length <= window.limit && (rows.length > 0 || window.skip === 0)
        ? BigInt(window.skip + rows.length)
        : await count(filtered);
  }
  return { rows, total };
}

async function count<DB, TB extends keyof DB>(filtered: SelectQueryBuilder<DB, TB, object>): Promise<bigint> {
  const row = await filtered.select(sql<bigint>`count(*)`.as("n")).executeTakeFirstOrThrow();
  return BigInt((row as unknown as { n: bigint | number }).n);
}
