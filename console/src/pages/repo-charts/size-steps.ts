import type { TagHistoryRecord } from "wharf/sdk";
import type { ChartPoint } from "../../components/charts/chart-types";

/**
 * The size of the image a tag named over time, from its history (oldest first) and each digest's
 * size: a point per move (a record whose digest differs from the previous one's), so a step line
 * through them shows every change. Deletions are not points (the line holds the last size until
 * the tag names an image again); digests whose size is unknown are skipped.
 */
export function sizeSteps(
  records: readonly TagHistoryRecord[],
  sizeOf: ReadonlyMap<string, number>,
): ChartPoint[] {
  const points: ChartPoint[] = [];
  let previous = "";
  for (const r of records) {
    if (r.deleted || r.digest === "") {
      previous = "";
      continue;
    }
    if (r.digest === previous) continue;
    previous = r.digest;
    const size = sizeOf.get(r.digest);
    const x = Date.parse(r.updateTimestamp);
    if (size === undefined || Number.isNaN(x)) continue;
    points.push({ x, y: size });
  }
  return points;
}

/** The distinct digests of a history (deletions left out), in first-seen order. */
export function digestsOf(records: readonly TagHistoryRecord[]): string[] {
  return [...new Set(records.filter((r) => !r.deleted && r.digest !== "").map((r) => r.digest))];
}
