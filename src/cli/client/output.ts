import { createRequire } from "node:module";
import type TableType from "cli-table3";

// cli-table3 and yaml load only when a table or YAML is printed: most runs print JSON, and each
// cold process pays for every module it loads (bench:cli).
const require = createRequire(import.meta.url);
const loadTable = () => require("cli-table3") as typeof TableType;
const stringify = (value: unknown): string => (require("yaml") as typeof import("yaml")).stringify(value);

/** The output formats of `-o`. */
export const OUTPUT_FORMATS = ["table", "json", "yaml", "id"] as const;

/** One of {@link OUTPUT_FORMATS}. */
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** A column of a table: its header and how a row's cell is written. */
export interface Column<T> {
  header: string;
  cell: (row: T) => string;
}

/** How a command's result is shown in each format. */
export interface View<T> {
  columns: readonly Column<T>[];
  /** The id printed by `-o id` (default the `uid` field). */
  id?: (row: T) => string;
  /** The plain JSON of a row for `-o json|yaml` (default the row itself). */
  json?: (row: T) => unknown;
}

/**
 * The format to print in: the one asked for, else a table on a terminal and JSON when piped (so
 * scripts get JSON without asking). Throws a usage error for an unknown name.
 */
export function chooseFormat(asked: string | undefined, isTty: boolean): OutputFormat {
  if (asked === undefined) return isTty ? "table" : "json";
  if ((OUTPUT_FORMATS as readonly string[]).includes(asked)) return asked as OutputFormat;
  throw new UsageError(`-o must be one of ${OUTPUT_FORMATS.join(", ")} (got "${asked}")`);
}

/** A wrong command line: printed as one line, exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/**
 * Writes `rows` in `format`: a list (JSON array, YAML sequence, one id per line, a table), or a
 * single resource when `single` (JSON object, YAML map, one id, a two-column table).
 */
export function render<T>(
  rows: readonly T[],
  view: View<T>,
  format: OutputFormat,
  options: { single?: boolean; color?: boolean } = {},
): string {
  const json = view.json ?? ((row: T) => row);
  const id = view.id ?? ((row: T) => String((row as { uid?: unknown }).uid ?? ""));
  switch (format) {
    case "json": {
      const value = options.single ? json(rows[0] as T) : rows.map(json);
      return `${JSON.stringify(value, null, 2)}\n`;
    }
    case "yaml":
      return stringify(options.single ? json(rows[0] as T) : rows.map(json));
    case "id":
      return rows.map((row) => `${id(row)}\n`).join("");
    case "table":
      return options.single
        ? detailTable(rows[0] as T, view, options.color)
        : listTable(rows, view, options.color);
  }
}

function tableStyle(color: boolean | undefined) {
  return { head: color ? ["cyan"] : [], border: color ? ["grey"] : [] };
}

function listTable<T>(rows: readonly T[], view: View<T>, color: boolean | undefined): string {
  const Table = loadTable();
  const table = new Table({ head: view.columns.map((c) => c.header), style: tableStyle(color) });
  for (const row of rows) table.push(view.columns.map((c) => c.cell(row)));
  return `${table.toString()}\n`;
}

function detailTable<T>(row: T, view: View<T>, color: boolean | undefined): string {
  const Table = loadTable();
  const table = new Table({ style: tableStyle(color) });
  for (const c of view.columns) table.push({ [c.header]: c.cell(row) });
  return `${table.toString()}\n`;
}

/** A protobuf Timestamp (or an RFC 3339 string) as RFC 3339 in UTC, "" when absent. */
export function timeCell(value: { seconds: bigint; nanos: number } | string | undefined): string {
  if (value === undefined || value === "") return "";
  if (typeof value === "string") return value;
  return new Date(Number(value.seconds) * 1000 + Math.floor(value.nanos / 1e6)).toISOString();
}
