// Shared by the workers dimension of `bench:api` and `bench:registry`: which worker counts to run,
// and how a figure measured several times is printed (median and spread, never the best alone).

/** `BENCH_WORKERS` ("1,2", "auto" = 1 and this machine's cores) as distinct counts, ascending. */
export function workerCounts(value: string, cores: number): number[] {
  const counts = value === "auto" ? [1, cores] : value.split(",").map((part) => Number(part.trim()));
  if (counts.length === 0 || counts.some((n) => !Number.isInteger(n) || n < 1 || n > 64)) {
    throw new Error(`BENCH_WORKERS must be "auto" or worker counts like "1,2" (got "${value}")`);
  }
  return [...new Set(counts)].sort((a, b) => a - b);
}

/** The median of `values` (NaN when empty). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** "median (min–max)" with `digits` decimals; just the value when measured once. */
export function spread(values: number[], digits = 0): string {
  const f = (n: number) => n.toFixed(digits);
  if (values.length <= 1) return f(values[0] ?? Number.NaN);
  return `${f(median(values))} (${f(Math.min(...values))}–${f(Math.max(...values))})`;
}

/** Measurements keyed by a label and a worker count, in the order they were taken. */
export class ByWorkers {
  readonly #values = new Map<string, number[]>();
  add(label: string, workers: number, value: number): void {
    const key = `${label}/${workers}`;
    this.#values.set(key, [...(this.#values.get(key) ?? []), value]);
  }
  /** A load's req/s under `label`, its CPU µs/req under "`label` cpu", machine busy % under "`label` busy". */
  addLoad(label: string, workers: number, load: { rps: number; cpuUs: number; machineBusy: number }): void {
    this.add(label, workers, load.rps);
    this.add(`${label} cpu`, workers, load.cpuUs);
    this.add(`${label} busy`, workers, load.machineBusy * 100);
  }
  all(label: string, workers: number): number[] {
    return this.#values.get(`${label}/${workers}`) ?? [];
  }
}

/** A report column: its title, the label its figures were added under, and decimals. */
export type Column = [title: string, label: string, digits: number];

/** One row per worker count, one "median (min–max)" cell per column. */
export function workersTable(counts: number[], f: ByWorkers, columns: Column[], width = 22): string[] {
  const lines = [
    `${"workers".padEnd(8)} ${columns.map(([title]) => title.padEnd(width)).join(" ")}`.trimEnd(),
  ];
  for (const n of counts) {
    const cells = columns.map(([, label, digits]) => spread(f.all(label, n), digits).padEnd(width));
    lines.push(`${String(n).padEnd(8)} ${cells.join(" ")}`.trimEnd());
  }
  return lines;
}

/** "N workers / 1 (medians): a 1.23×, b 0.98×" for the highest count against the lowest; "" with one. */
export function scaling(
  counts: number[],
  f: ByWorkers,
  labels: Array<[title: string, label: string]>,
): string {
  const [first, last] = [counts[0] as number, counts.at(-1) as number];
  if (last === first) return "";
  const gain = (label: string) => (median(f.all(label, last)) / median(f.all(label, first))).toFixed(2);
  return `${last} workers / ${first} (medians): ${labels.map(([title, label]) => `${title} ${gain(label)}×`).join(", ")}`;
}
