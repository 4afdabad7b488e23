import { describe, expect, it } from "vitest";
import { DAY_MS } from "../../components/charts/scale";
import { lastDays, severitySeries } from "./vuln-series";

const day = (iso: string) => ({ seconds: BigInt(Date.parse(iso) / 1000), nanos: 0 });
const counts = (bySeverity: Record<number, number>) =>
  [0, 1, 2, 3, 4, 5].map((severity) => ({ severity, count: BigInt(bySeverity[severity] ?? 0) }));

describe("severitySeries", () => {
  it("makes one series per severity, worst first, a point per answered day", () => {
    const series = severitySeries([
      { date: day("2026-11-21T00:00:00Z"), vulnCounts: counts({ 5: 2, 4: 1 }) },
      { date: day("2026-11-20T00:00:00Z"), vulnCounts: counts({ 5: 1, 3: 4 }) },
    ]);
    expect(series.map((s) => s.name)).toEqual(["critical", "high", "medium", "low"]);
    expect(series[0]?.points).toEqual([
      { x: Date.parse("2026-11-20T00:00:00Z"), y: 1 },
      { x: Date.parse("2026-11-21T00:00:00Z"), y: 2 },
    ]);
    expect(series[2]?.points.map((p) => p.y)).toEqual([4, 0]);
  });

  it("adds negligible and unknown only when some day counts one", () => {
    const series = severitySeries([{ date: day("2026-11-20T00:00:00Z"), vulnCounts: counts({ 1: 3 }) }]);
    expect(series.map((s) => s.name)).toEqual(["critical", "high", "medium", "low", "negligible"]);
  });

  it("has series without points when there is no day", () => {
    expect(severitySeries([]).every((s) => s.points.length === 0)).toBe(true);
  });
});

describe("lastDays", () => {
  it("ends with today's midnight and spans the given days", () => {
    const [from, to] = lastDays(30, Date.parse("2026-11-29T20:00:00Z"));
    expect(to).toBe(Date.parse("2026-11-29T00:00:00Z"));
    expect((to - from) / DAY_MS).toBe(29);
  });
});
