import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { LineChart, pathOf, tableOf } from "./line-chart";
import { DAY_MS } from "./scale";

const DAY1 = Date.UTC(2026, 10, 1);
const day = (n: number) => DAY1 + n * DAY_MS;
const formatX = (x: number) => new Date(x).toISOString().slice(0, 10);

describe("LineChart", () => {
  afterEach(cleanup);

  it("draws one line per series, a legend, and the numbers as a table and a summary", () => {
    render(
      <LineChart
        title="Vulnerabilities"
        integer
        formatX={formatX}
        formatY={String}
        series={[
          {
            name: "critical",
            tone: "critical",
            points: [
              { x: day(0), y: 1 },
              { x: day(1), y: 3 },
            ],
          },
          {
            name: "high",
            tone: "high",
            points: [
              { x: day(0), y: 2 },
              { x: day(1), y: 0 },
            ],
          },
        ]}
      />,
    );
    const img = screen.getByRole("img");
    expect(img.getAttribute("aria-label")).toBe(
      "Vulnerabilities, 2026-11-01 to 2026-11-02: critical latest 3 (highest 3); high latest 0 (highest 2)",
    );
    expect(img.querySelectorAll("path.line")).toHaveLength(2);
    expect(screen.getByRole("list", { name: "Legend of Vulnerabilities" }).textContent).toBe("criticalhigh");
    const rows = screen.getByTestId("chart-table").querySelectorAll("tbody tr");
    expect([...rows].map((r) => r.textContent)).toEqual(["2026-11-0112", "2026-11-0230"]);
    // y ticks 0..3, whole numbers
    expect([...img.querySelectorAll("g.tick text")].map((t) => t.textContent)).toEqual(["0", "1", "2", "3"]);
  });

  it("shows the table on demand", () => {
    render(
      <LineChart
        title="T"
        formatX={formatX}
        formatY={String}
        series={[{ name: "a", tone: "accent", points: [{ x: day(0), y: 1 }] }]}
      />,
    );
    const toggle = screen.getByRole("button", { name: "Show data table" });
    const table = screen.getByTestId("chart-table").parentElement;
    expect(table?.className).toBe("visually-hidden");
    fireEvent.click(toggle);
    expect(screen.getByRole("button", { name: "Hide data table" }).getAttribute("aria-expanded")).toBe(
      "true",
    );
    expect(table?.className).toContain("chart-table");
  });

  it("draws a single point as a dot in the middle", () => {
    render(
      <LineChart
        title="Size"
        formatX={formatX}
        formatY={String}
        series={[{ name: "size", tone: "accent", points: [{ x: day(3), y: 10 }] }]}
      />,
    );
    const dots = screen.getByRole("img").querySelectorAll("circle.dot");
    expect(dots).toHaveLength(1);
    expect(Number(dots[0]?.getAttribute("cx"))).toBe((56 + 640 - 16) / 2);
    // No legend for one series.
    expect(screen.queryByRole("list")).toBeNull();
  });

  it("says so when there is no data, with no drawing or table", () => {
    render(
      <LineChart
        title="Size"
        formatX={formatX}
        formatY={String}
        emptyText="Nothing yet."
        series={[{ name: "size", tone: "accent", points: [] }]}
      />,
    );
    expect(screen.getByText("Nothing yet.")).toBeTruthy();
    expect(screen.queryByRole("img")).toBeNull();
    expect(screen.queryByTestId("chart-table")).toBeNull();
  });

  it("places points within the fixed x domain", () => {
    render(
      <LineChart
        title="T"
        formatX={formatX}
        formatY={String}
        xDomain={[day(0), day(10)]}
        series={[{ name: "a", tone: "accent", points: [{ x: day(5), y: 1 }] }]}
      />,
    );
    const dot = screen.getByRole("img").querySelector("circle.dot");
    expect(Number(dot?.getAttribute("cx"))).toBeCloseTo(56 + (640 - 16 - 56) / 2);
    expect(screen.getByRole("img").getAttribute("aria-label")).toContain("2026-11-01 to 2026-11-11");
  });
});

describe("pathOf and tableOf", () => {
  const id = (v: number) => v;
  it("draws steps held until the next point and to the end", () => {
    const points = [
      { x: 0, y: 5 },
      { x: 10, y: 7 },
    ];
    expect(pathOf(points, id, id, true, 20)).toBe("M 0 5 H 10 V 7 H 20");
    expect(pathOf(points, id, id, false, 20)).toBe("M 0 5 L 10 7");
  });
  it("marks a series without a point at some x", () => {
    const table = tableOf(
      [
        { name: "a", tone: "accent", points: [{ x: 1, y: 1 }] },
        { name: "b", tone: "ok", points: [{ x: 2, y: 2 }] },
      ],
      "X",
      String,
      String,
    );
    expect(table).toEqual({
      head: ["X", "a", "b"],
      rows: [
        ["1", "1", "–"],
        ["2", "–", "2"],
      ],
    });
  });
});
