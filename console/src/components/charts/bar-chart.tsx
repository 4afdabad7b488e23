import type { ReactNode } from "react";
import { ChartFrame } from "./chart-frame";
import type { ChartTone } from "./chart-types";
import { evenlySpaced, linearScale, niceTicks } from "./scale";

const WIDTH = 640;
const HEIGHT = 200;
const MARGIN = { top: 10, right: 16, bottom: 28, left: 56 };
/** Gap between bars, as a fraction of each bar's slot. */
const GAP = 0.2;

/** One bar: its label on the x axis (e.g. a day) and its value. */
export interface Bar {
  label: string;
  value: number;
}

/**
 * A bar chart of one value per label, in the given order (e.g. pushes per day): y axis from 0
 * with a few round ticks, at most `maxLabels` x labels (first and last included), each bar titled
 * with its label and value, `role="img"` with a summary (total, highest bar) as its name, and the
 * numbers as a table. With no bar, `emptyText` is shown instead.
 */
export function BarChart({
  title,
  bars,
  tone = "accent",
  formatY = String,
  integer = true,
  xLabel = "Date",
  maxLabels = 6,
  emptyText = "No data for this period.",
}: {
  title: string;
  bars: readonly Bar[];
  tone?: ChartTone;
  formatY?: (y: number) => string;
  /** Whole-number y ticks (counts); the default. */
  integer?: boolean;
  /** Heading of the table's first column. */
  xLabel?: string;
  maxLabels?: number;
  emptyText?: ReactNode;
}) {
  const table = { head: [xLabel, title], rows: bars.map((b) => [b.label, formatY(b.value)]) };
  if (bars.length === 0) {
    return (
      <ChartFrame
        title={title}
        summary={`${title}: no data`}
        legend={[]}
        table={table}
        empty={<p className="muted chart-empty">{emptyText}</p>}
      >
        {null}
      </ChartFrame>
    );
  }
  const values = bars.map((b) => b.value);
  const yTicks = niceTicks(0, Math.max(...values), 4, integer);
  const y = linearScale([0, yTicks[yTicks.length - 1] ?? 1], [HEIGHT - MARGIN.bottom, MARGIN.top]);
  const slot = (WIDTH - MARGIN.left - MARGIN.right) / bars.length;
  const barWidth = Math.max(1, slot * (1 - GAP));
  const left = (i: number) => MARGIN.left + i * slot + (slot - barWidth) / 2;
  const labelled = evenlySpaced(
    bars.map((_, i) => i),
    maxLabels,
  );
  const bottom = HEIGHT - MARGIN.bottom;
  const highest = bars.reduce((a, b) => (b.value > a.value ? b : a));
  const total = values.reduce((a, b) => a + b, 0);
  const summary = `${title}, ${bars[0]?.label} to ${bars[bars.length - 1]?.label}: total ${formatY(total)}, highest ${formatY(highest.value)} on ${highest.label}`;

  return (
    <ChartFrame title={title} summary={summary} legend={[]} table={table}>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} className="chart-svg" aria-hidden="true" focusable="false">
        {yTicks.map((t) => (
          <g key={`y${t}`} className="tick">
            <line className="grid" x1={MARGIN.left} x2={WIDTH - MARGIN.right} y1={y(t)} y2={y(t)} />
            <text x={MARGIN.left - 6} y={y(t)} textAnchor="end" dominantBaseline="middle">
              {formatY(t)}
            </text>
          </g>
        ))}
        <g className={`series tone-${tone}`}>
          {bars.map((b, i) => (
            <rect
              // biome-ignore lint/suspicious/noArrayIndexKey: bars are positional
              key={i}
              className="bar"
              x={left(i)}
              y={y(b.value)}
              width={barWidth}
              height={bottom - y(b.value)}
            >
              <title>{`${b.label}: ${formatY(b.value)}`}</title>
            </rect>
          ))}
        </g>
        {labelled.map((i) => (
          <text
            key={`x${i}`}
            className="tick"
            x={left(i) + barWidth / 2}
            y={bottom + 18}
            textAnchor={left(i) + barWidth / 2 > WIDTH - MARGIN.right - 40 ? "end" : "middle"}
          >
            {bars[i]?.label}
          </text>
        ))}
        <line className="axis" x1={MARGIN.left} x2={WIDTH - MARGIN.right} y1={bottom} y2={bottom} />
      </svg>
    </ChartFrame>
  );
}
