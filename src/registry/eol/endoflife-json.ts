import type { EolCycleRow } from "../../storage/eol-store.js";

/**
 * Reads endoflife.date product JSON, in either of its two published shapes, into release cycles:
 *
 * - the legacy API (`/api/<product>.json`): an array of `{cycle, releaseDate, eol, latest,
 *   latestReleaseDate, lts, support, extendedSupport, codename, …}` where `eol`, `lts`, `support`
 *   and `extendedSupport` are a `YYYY-MM-DD` date or a boolean;
 * - API v1 (`/api/v1/products/<product>`): `{result: {releases: [{name, codename, releaseDate,
 *   isLts, ltsFrom, isEol, eolFrom, eoasFrom, eoesFrom, latest: {name, date}, …}]}}`.
 *
 * Unknown fields are ignored. A release that cannot be read is rejected with its location (`[3]`
 * or `result.releases[3]`), the field at fault and why; the others are kept.
 */

/** A release that was refused: where in the file, the field at fault (`""`: the whole release) and why. */
export interface EolRecordProblem {
  location: string;
  field: string;
  message: string;
}

/** The cycles read from a file (without their product) and the releases refused. */
export interface EolProductData {
  cycles: Omit<EolCycleRow, "product">[];
  rejected: EolRecordProblem[];
  /** How many releases the file holds, refused ones included. */
  records: number;
}

/** The file as a whole is not endoflife.date product JSON (not JSON, or neither shape). */
export class EolFileError extends Error {}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const CYCLE = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;

class Problem extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** Parses the text of one product file; throws EolFileError when it is not one at all. */
export function parseEndOfLifeJson(text: string): EolProductData {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new EolFileError(`not JSON: ${(err as Error).message}`);
  }
  if (Array.isArray(doc)) return readReleases(doc, "", readLegacyRelease);
  const releases = (doc as { result?: { releases?: unknown } } | null)?.result?.releases;
  if (Array.isArray(releases)) return readReleases(releases, "result.releases", readV1Release);
  throw new EolFileError(
    "not endoflife.date product JSON: expected an array of cycles (legacy API) or {result: {releases: [...]}} (API v1)",
  );
}

function readReleases(
  items: unknown[],
  path: string,
  read: (item: Record<string, unknown>) => Omit<EolCycleRow, "product">,
): EolProductData {
  const cycles: Omit<EolCycleRow, "product">[] = [];
  const rejected: EolRecordProblem[] = [];
  const seen = new Set<string>();
  items.forEach((item, index) => {
    const location = `${path}[${index}]`;
    try {
      if (typeof item !== "object" || item === null || Array.isArray(item)) {
        throw new Problem("", "a release must be a JSON object");
      }
      const cycle = read(item as Record<string, unknown>);
      if (seen.has(cycle.cycle)) {
        throw new Problem(path === "" ? "cycle" : "name", `cycle "${cycle.cycle}" appears twice in the file`);
      }
      seen.add(cycle.cycle);
      cycles.push(cycle);
    } catch (err) {
      if (!(err instanceof Problem)) throw err;
      rejected.push({ location, field: err.field, message: err.message });
    }
  });
  return { cycles, rejected, records: items.length };
}

function readLegacyRelease(item: Record<string, unknown>): Omit<EolCycleRow, "product"> {
  const eol = dateOrFlag(item, "eol");
  const lts = dateOrFlag(item, "lts");
  return withDates(
    {
      cycle: cycleName(item, "cycle"),
      codename: optionalString(item, "codename"),
      eolUndated: eol === true,
      lts: lts !== false,
      latestVersion: optionalString(item, "latest"),
    },
    {
      releaseDate: optionalDate(item, "releaseDate"),
      eolDate: typeof eol === "number" ? eol : undefined,
      ltsFrom: typeof lts === "number" ? lts : undefined,
      latestReleaseDate: optionalDate(item, "latestReleaseDate"),
      supportEndDate: dateOnly(dateOrFlag(item, "support")),
      extendedSupportEndDate: dateOnly(dateOrFlag(item, "extendedSupport")),
    },
  );
}

function readV1Release(item: Record<string, unknown>): Omit<EolCycleRow, "product"> {
  const eolDate = optionalDate(item, "eolFrom");
  const latest = item.latest;
  if (latest !== undefined && latest !== null && (typeof latest !== "object" || Array.isArray(latest))) {
    throw new Problem("latest", "must be an object {name, date} or null");
  }
  const latestObject = (latest ?? {}) as Record<string, unknown>;
  return withDates(
    {
      cycle: cycleName(item, "name"),
      codename: optionalString(item, "codename"),
      eolUndated: eolDate === undefined && optionalFlag(item, "isEol"),
      lts: optionalFlag(item, "isLts"),
      latestVersion: prefixed("latest", () => optionalString(latestObject, "name")),
    },
    {
      releaseDate: optionalDate(item, "releaseDate"),
      eolDate,
      ltsFrom: optionalDate(item, "ltsFrom"),
      latestReleaseDate: prefixed("latest", () => optionalDate(latestObject, "date")),
      supportEndDate: optionalDate(item, "eoasFrom"),
      extendedSupportEndDate: optionalDate(item, "eoesFrom"),
    },
  );
}

/** `base` with the dates that are set (absent ones left out, as the row type wants). */
function withDates(
  base: Omit<EolCycleRow, "product">,
  dates: Partial<Record<keyof EolCycleRow, number | undefined>>,
): Omit<EolCycleRow, "product"> {
  const row: Record<string, unknown> = { ...base };
  for (const [field, value] of Object.entries(dates)) if (value !== undefined) row[field] = value;
  return row as unknown as Omit<EolCycleRow, "product">;
}

/** Runs `read`, naming problems `<object>.<field>`. */
function prefixed<T>(object: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof Problem) throw new Problem(`${object}.${err.field}`, err.message);
    throw err;
  }
}

function cycleName(item: Record<string, unknown>, field: string): string {
  const value = item[field];
  const text = typeof value === "number" && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== "string" || text === "") throw new Problem(field, "required: the cycle's name");
  if (!CYCLE.test(text)) {
    throw new Problem(
      field,
      `"${text}" is not a cycle name (letters, digits, ".", "_", "+", "-"; at most 64)`,
    );
  }
  return text;
}

function optionalString(item: Record<string, unknown>, field: string): string {
  const value = item[field];
  if (value === undefined || value === null) return "";
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (typeof value !== "string") throw new Problem(field, "must be a string");
  return value;
}

function optionalFlag(item: Record<string, unknown>, field: string): boolean {
  const value = item[field];
  if (value === undefined || value === null) return false;
  if (typeof value !== "boolean") throw new Problem(field, "must be true or false");
  return value;
}

function optionalDate(item: Record<string, unknown>, field: string): number | undefined {
  const value = item[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new Problem(field, "must be a date YYYY-MM-DD");
  return parseDay(value, field);
}

/** A `YYYY-MM-DD` date (ms), or the boolean itself; absent or null reads as false. */
function dateOrFlag(item: Record<string, unknown>, field: string): number | boolean {
  const value = item[field];
  if (value === undefined || value === null) return false;
  if (typeof value === "boolean") return value;
  if (typeof value !== "string") throw new Problem(field, "must be a date YYYY-MM-DD, true or false");
  return parseDay(value, field);
}

function dateOnly(value: number | boolean): number | undefined {
  return typeof value === "number" ? value : undefined;
}

function parseDay(value: string, field: string): number {
  const match = DATE.exec(value);
  const ms = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : Number.NaN;
  if (!match || Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value) {
    throw new Problem(field, `"${value}" is not a date YYYY-MM-DD`);
  }
  return ms;
}
