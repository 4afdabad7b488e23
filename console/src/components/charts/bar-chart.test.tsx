import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { BarChart } from "./bar-chart";

describe("BarChart", () => {
  afterEach(cleanup);

  it("draws one bar per value, heights proportional, with a summary and a table", () => {
    render(
      <BarChart
        title="Pushes per day"
        bars={[
          { label: "Nov 1", value: 2 },
          { label: "Nov 2", value: 0 },
          { label: "Nov 3", value: 4 },
        ]}
      />,
    );
    const img = screen.getByRole("img");
    expect(img.getAttribute("aria-label")).toBe(
      "Pushes per day, Nov 1 to Nov 3: total 6, highest 4 on Nov 3",
    );
    const rects = [...img.querySelectorAll("rect.bar")];
    expect(rects).toHaveLength(3);
    const heights = rects.map((r) => Number(r.getAttribute("height")));
    expect(heights[1]).toBe(0);
    expect(heights[2]).toBeCloseTo((heights[0] ?? 0) * 2);
    expect(rects[2]?.textContent).toBe("Nov 3: 4");
    const rows = screen.getByTestId("chart-table").querySelectorAll("tbody tr");
    expect([...rows].map((r) => r.textContent)).toEqual(["Nov 12", "Nov 20", "Nov 34"]);
  });

  it("labels at most maxLabels bars, first and last included", () => {
    const bars = Array.from({ length: 30 }, (_, i) => ({ label: `d${i}`, value: i }));
    render(<BarChart title="P" bars={bars} maxLabels={4} />);
    const labels = [...screen.getByRole("img").querySelectorAll("text.tick")].map((t) => t.textContent);
    expect(labels).toEqual(["d0", "d10", "d19", "d29"]);
  });

  it("draws an all-zero series on a 0..1 axis and a single bar", () => {
    render(<BarChart title="P" bars={[{ label: "only", value: 0 }]} />);
    const img = screen.getByRole("img");
    expect([...img.querySelectorAll("g.tick text")].map((t) => t.textContent)).toEqual(["0", "1"]);
    expect(img.querySelectorAll("rect.bar")).toHaveLength(1);
  });

  it("says so when there is no bar", () => {
    render(<BarChart title="P" bars={[]} emptyText="No pushes." />);
    expect(screen.getByText("No pushes.")).toBeTruthy();
    expect(screen.queryByRole("img")).toBeNull();
  });
});
