import { type ReactNode, useId, useState } from "react";
import type { ChartTone } from "./chart-types";
import "./charts.css";

/**
 * The frame every chart shares: a figure whose heading is `title`, a legend (when there is more
 * than one series), the drawing (`role="img"` with `summary` as its accessible name) and the
 * numbers as a table. The table is always in the page for screen readers (visually hidden) and a
 * button shows it to everyone, so keyboard and low-vision users get the exact values too.
 */
export function ChartFrame({
  title,
  summary,
  legend,
  table,
  children,
  empty,
}: {
  title: string;
  /** The accessible name of the drawing: what it shows, in numbers. */
  summary: string;
  legend: readonly { name: string; tone: ChartTone }[];
  table: { head: readonly string[]; rows: readonly (readonly string[])[] };
  /** The SVG drawing. */
  children: ReactNode;
  /** Shown instead of the drawing and table when there is no data. */
  empty?: ReactNode;
}) {
  const [tableShown, setTableShown] = useState(false);
  const tableId = useId();
  return (
    <figure className="chart" data-testid="chart">
      <figcaption className="chart-title">{title}</figcaption>
      {empty ?? (
        <>
          {legend.length > 1 && (
            <ul className="chart-legend" aria-label={`Legend of ${title}`}>
              {legend.map((l) => (
                <li key={l.name} className={`tone-${l.tone}`}>
                  <span className="swatch" aria-hidden="true" />
                  {l.name}
                </li>
              ))}
            </ul>
          )}
          <div className="chart-drawing" role="img" aria-label={summary}>
            {children}
          </div>
          <button
            type="button"
            className="secondary small chart-table-toggle"
            aria-expanded={tableShown}
            aria-controls={tableId}
            onClick={() => setTableShown(!tableShown)}
          >
            {tableShown ? "Hide data table" : "Show data table"}
          </button>
          <div id={tableId} className={tableShown ? "table-wrap chart-table" : "visually-hidden"}>
            <table data-testid="chart-table">
              <caption className="visually-hidden">{title}, as numbers</caption>
              <thead>
                <tr>
                  {table.head.map((h) => (
                    <th key={h} scope="col">
                      {h}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {table.rows.map((row, r) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: rows are positional (two may share a label)
                  <tr key={r}>
                    {row.map((cell, i) =>
                      i === 0 ? (
                        // biome-ignore lint/suspicious/noArrayIndexKey: cells are positional
                        <th key={i} scope="row">
                          {cell}
                        </th>
                      ) : (
                        // biome-ignore lint/suspicious/noArrayIndexKey: cells are positional
                        <td key={i}>{cell}</td>
                      ),
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </figure>
  );
}
