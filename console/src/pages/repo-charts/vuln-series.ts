import type { ChartSeries, ChartTone } from "../../components/charts/chart-types";
import { DAY_MS, startOfUtcDay } from "../../components/charts/scale";

/** The severities of ListVulnCountReports (ImageVulnerability.Severity numbers), worst first. */
const SEVERITIES: ReadonlyArray<{ number: number; name: string; tone: ChartTone }> = [
  { number: 5, name: "critical", tone: "critical" },
  { number: 4, name: "high", tone: "high" },
  { number: 3, name: "medium", tone: "medium" },
  { number: 2, name: "low", tone: "low" },
  { number: 1, name: "negligible", tone: "muted" },
  { number: 0, name: "unknown", tone: "unknown" },
];

/** Severities always drawn; the others (negligible, unknown) only when some day counts one. */
const ALWAYS = new Set(["critical", "high", "medium", "low"]);

/** One day of ListVulnCountReports, as far as the chart needs it. */
export interface DayCounts {
  /** 00:00 UTC of the day. */
  date?: { seconds: bigint; nanos: number };
  vulnCounts: readonly { severity: number; count: bigint }[];
}

/**
 * The first and last day (00:00 UTC, ms) of the `days` days ending with the day of `now`: the
 * range a "last 30 days" chart asks for and draws.
 */
export function lastDays(days: number, now: number): [number, number] {
  const today = startOfUtcDay(now);
  return [today - (days - 1) * DAY_MS, today];
}

/**
 * One series per severity (worst first) with a point per day the API answered (days the tag
 * named nothing are absent, so the line breaks there only in the table). Negligible and unknown
 * are left out when they are 0 on every day.
 */
export function severitySeries(items: readonly DayCounts[]): ChartSeries[] {
  const days = items
    .filter((d) => d.date)
    .map((d) => ({
      x: Number(d.date?.seconds ?? 0n) * 1000,
      counts: new Map(d.vulnCounts.map((c) => [Number(c.severity), Number(c.count)])),
    }))
    .sort((a, b) => a.x - b.x);
  return SEVERITIES.map((s) => ({
    name: s.name,
    tone: s.tone,
    points: days.map((d) => ({ x: d.x, y: d.counts.get(s.number) ?? 0 })),
  })).filter((s) => ALWAYS.has(s.name) || s.points.some((p) => p.y > 0));
}
