import type { ReactNode } from "react";
import { ChartFrame } from "./chart-frame";
import type { ChartPoint, ChartSeries } from "./chart-types";
import { dayTicks, linearScale, niceTicks } from "./scale";

/** The drawing's coordinate box (the SVG scales to its container's width). */
const WIDTH = 640;
const HEIGHT = 220;
const MARGIN = { top: 10, right: 16, bottom: 28, left: 56 };
/** Points drawn as dots only up to this many per series (more would be clutter). */
const MAX_DOTS = 60;

/**
 * A line chart of one or more series over time (x in ms): y axis from 0 with a few round ticks, a
 * time axis with a few labelled days, a legend, `role="img"` with a summary of each series (latest
 * and highest value) as its name, and the numbers as a table (one row per x, one column per
 * series). `step` draws each value as held until the next (a tag's size between moves), with a
 * dot at each move; `area` fills under the lines. `xDomain` fixes the time range (e.g. the last 30
 * days) instead of the points' own range. With no point at all, `emptyText` is shown instead.
 */
export function LineChart({
  title,
  series,
  xDomain,
  formatX,
  formatTick = formatX,
  formatY,
  step = false,
  area = false,
  integer = false,
  yTicks: ticksOf = (min, max) => niceTicks(min, max, 4, integer),
  xLabel = "Date",
  emptyText = "No data for this period.",
}: {
  title: string;
  series: readonly ChartSeries[];
  xDomain?: readonly [number, number];
  /** Label of an x value (table rows, axis ticks, summary). */
  formatX: (x: number) => string;
  /** Label of a day tick on the x axis (a UTC midnight); `formatX` by default. */
  formatTick?: (x: number) => string;
  formatY: (y: number) => string;
  step?: boolean;
  area?: boolean;
  /** Whole-number y ticks (counts). */
  integer?: boolean;
  /** The y ticks covering [min, max] (their last one is the axis' top); round numbers by default. */
  yTicks?: (min: number, max: number) => number[];
  /** Heading of the table's first column. */
  xLabel?: string;
  emptyText?: ReactNode;
}) {
  const all = series.flatMap((s) => s.points);
  if (all.length === 0) {
    return (
      <ChartFrame
        title={title}
        summary={`${title}: no data`}
        legend={[]}
        table={{ head: [], rows: [] }}
        empty={<p className="muted chart-empty">{emptyText}</p>}
      >
        {null}
      </ChartFrame>
    );
  }
  const xs = all.map((p) => p.x);
  const [x0, x1] = xDomain ?? [Math.min(...xs), Math.max(...xs)];
  const yTicks = ticksOf(0, Math.max(...all.map((p) => p.y)));
  const yMax = yTicks[yTicks.length - 1] ?? 1;
  const x = linearScale([x0, x1], [MARGIN.left, WIDTH - MARGIN.right]);
  const y = linearScale([0, yMax], [HEIGHT - MARGIN.bottom, MARGIN.top]);
  const bottom = HEIGHT - MARGIN.bottom;

  return (
    <ChartFrame
      title={title}
      summary={summarize(title, series, formatX(x0), formatX(x1), formatY)}
      legend={series}
      table={tableOf(series, xLabel, formatX, formatY)}
    >
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} className="chart-svg" aria-hidden="true" focusable="false">
        {yTicks.map((t) => (
          <g key={`y${t}`} className="tick">
            <line className="grid" x1={MARGIN.left} x2={WIDTH - MARGIN.right} y1={y(t)} y2={y(t)} />
            <text x={MARGIN.left - 6} y={y(t)} textAnchor="end" dominantBaseline="middle">
              {formatY(t)}
            </text>
          </g>
        ))}
        {dayTicks(x0, x1, 5).map((t) => (
          <text key={`x${t}`} className="tick" x={x(t)} y={bottom + 18} textAnchor={anchorOf(x(t))}>
            {formatTick(t)}
          </text>
        ))}
        <line className="axis" x1={MARGIN.left} x2={WIDTH - MARGIN.right} y1={bottom} y2={bottom} />
        {series.map((s) => {
          const d = pathOf(s.points, x, y, step, x1);
          return (
            <g key={s.name} className={`series tone-${s.tone}`} data-series={s.name}>
              {area && s.points.length > 1 && (
                <path className="area" d={`${d} V ${bottom} H ${x(s.points[0]?.x ?? x0)} Z`} />
              )}
              <path className="line" d={d} />
              {(s.points.length <= MAX_DOTS || step) &&
                s.points.map((p) => <circle key={p.x} className="dot" cx={x(p.x)} cy={y(p.y)} r={3} />)}
            </g>
          );
        })}
      </svg>
    </ChartFrame>
  );
}

/** A tick label near the drawing's right edge ends at its tick, so it is not cut off. */
function anchorOf(x: number): "middle" | "end" {
  return x > WIDTH - MARGIN.right - 40 ? "end" : "middle";
}

/** The SVG path through `points`; as steps, held from each point to the next and to `end`. */
export function pathOf(
  points: readonly ChartPoint[],
  x: (v: number) => number,
  y: (v: number) => number,
  step: boolean,
  end: number,
): string {
  const parts: string[] = [];
  points.forEach((p, i) => {
    if (i === 0) parts.push(`M ${x(p.x)} ${y(p.y)}`);
    else if (step) parts.push(`H ${x(p.x)} V ${y(p.y)}`);
    else parts.push(`L ${x(p.x)} ${y(p.y)}`);
  });
  const last = points[points.length - 1];
  if (step && last && end > last.x) parts.push(`H ${x(end)}`);
  return parts.join(" ");
}

/** "<title>, <from> to <to>: critical latest 2 (highest 5); high …". */
export function summarize(
  title: string,
  series: readonly ChartSeries[],
  from: string,
  to: string,
  formatY: (y: number) => string,
): string {
  const parts = series.map((s) => {
    const last = s.points[s.points.length - 1];
    if (!last) return `${s.name} no data`;
    const max = Math.max(...s.points.map((p) => p.y));
    return `${s.name} latest ${formatY(last.y)} (highest ${formatY(max)})`;
  });
  return `${title}, ${from} to ${to}: ${parts.join("; ")}`;
}

/** One row per distinct x (ascending), one column per series ("–" where a series has no point). */
export function tableOf(
  series: readonly ChartSeries[],
  xLabel: string,
  formatX: (x: number) => string,
  formatY: (y: number) => string,
): { head: string[]; rows: string[][] } {
  const xs = [...new Set(series.flatMap((s) => s.points.map((p) => p.x)))].sort((a, b) => a - b);
  const byX = series.map((s) => new Map(s.points.map((p) => [p.x, p.y])));
  return {
    head: [xLabel, ...series.map((s) => s.name)],
    rows: xs.map((v) => [
      formatX(v),
      ...byX.map((m) => {
        const value = m.get(v);
        return value === undefined ? "–" : formatY(value);
      }),
    ]),
  };
}
