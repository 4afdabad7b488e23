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

/**
 * The longest tail of `records` (oldest first) naming at most `maxDigests` distinct images, and
 * whether older records were left out: the size chart looks up each image's size, so a long history
 * is charted over its recent part, never with moves to images whose size was not asked.
 */
export function recentRecords(
  records: readonly TagHistoryRecord[],
  maxDigests: number,
): { records: readonly TagHistoryRecord[]; truncated: boolean } {
  const seen = new Set<string>();
  for (let i = records.length - 1; i >= 0; i--) {
    const r = records[i] as TagHistoryRecord;
    if (r.deleted || r.digest === "" || seen.has(r.digest)) continue;
    if (seen.size === maxDigests) return { records: records.slice(i + 1), truncated: true };
    seen.add(r.digest);
  }
  return { records, truncated: false };
}
