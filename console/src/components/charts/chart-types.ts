/**
 * The colour of a series or bar: a class `tone-<name>` that charts.css maps to a CSS variable
 * (severities to `--sev-*`, others to the theme's `--accent`, `--ok`, `--warn`, `--muted`), so
 * a theme recolours charts by redefining variables.
 */
export type ChartTone =
  | "critical"
  | "high"
  | "medium"
  | "low"
  | "unknown"
  | "accent"
  | "ok"
  | "warn"
  | "muted";

/** One value at one position of the x axis (a time in ms for time charts). */
export interface ChartPoint {
  x: number;
  y: number;
}

/** A named line of a chart, its points sorted by x. */
export interface ChartSeries {
  name: string;
  tone: ChartTone;
  points: readonly ChartPoint[];
}
