/** Scales and ticks for the console's SVG charts: pure functions, no DOM. */

/** Milliseconds in a UTC day. */
export const DAY_MS = 86_400_000;

/**
 * A linear map from `domain` to `range`. A domain of zero width (one point, or all values equal)
 * maps every value to the middle of the range, so a single point is drawn centred.
 */
export function linearScale(
  domain: readonly [number, number],
  range: readonly [number, number],
): (value: number) => number {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  if (d1 === d0) return () => (r0 + r1) / 2;
  const k = (r1 - r0) / (d1 - d0);
  return (value) => r0 + (value - d0) * k;
}

/** The smallest of 1, 2, 5 × 10^n that is at least `raw`. */
function niceStep(raw: number): number {
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

/**
 * About `count` evenly spaced round values (steps of 1, 2 or 5 × 10^n) covering [min, max]: the
 * first tick is ≤ min and the last ≥ max, so the ticks' ends make a good axis domain. With
 * `integer`, steps are whole numbers (counts). An empty range [v, v] is widened to [v, v + 1]
 * (0..1 for an all-zero series) so an axis still has two ticks.
 */
export function niceTicks(min: number, max: number, count = 4, integer = false): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  let lo = Math.min(min, max);
  let hi = Math.max(min, max);
  if (hi === lo) hi = lo + 1;
  let step = niceStep((hi - lo) / Math.max(1, count));
  if (integer) step = Math.max(1, Math.round(step));
  lo = Math.floor(lo / step) * step;
  hi = Math.ceil(hi / step) * step;
  const ticks: number[] = [];
  // Rounded to the step's precision so 0.1 + 0.2 does not show as 0.30000000000000004.
  const digits = Math.max(0, -Math.floor(Math.log10(step)));
  for (let v = lo; v <= hi + step / 2; v += step) ticks.push(Number(v.toFixed(digits)));
  return ticks;
}

/** 00:00 UTC of the day `ms` falls in. */
export function startOfUtcDay(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/**
 * At most `count` values from `values` (sorted), evenly spaced and always including the first and
 * the last: the labelled ticks of an axis with many positions (days, bars).
 */
export function evenlySpaced<T>(values: readonly T[], count: number): T[] {
  if (values.length <= count) return [...values];
  if (count <= 1) return values.slice(0, 1);
  const picked: T[] = [];
  const step = (values.length - 1) / (count - 1);
  for (let i = 0; i < count; i++) picked.push(values[Math.round(i * step)] as T);
  return picked;
}

/**
 * Labelled ticks of a time axis from `start` to `end` (ms): at most `count` UTC midnights inside
 * the range, evenly spaced, the first and last such midnight included. A range with no midnight
 * inside (less than a day) has one tick, at `start`.
 */
export function dayTicks(start: number, end: number, count = 5): number[] {
  const lo = Math.min(start, end);
  const hi = Math.max(start, end);
  const days: number[] = [];
  for (let d = Math.ceil(lo / DAY_MS) * DAY_MS; d <= hi; d += DAY_MS) days.push(d);
  return days.length > 0 ? evenlySpaced(days, count) : [lo];
}

/**
 * Ticks for byte sizes: round numbers of the unit the largest value is written in (KiB, MiB…,
 * as `formatBytes` writes them), so labels read "0 B, 2.0 KiB, 4.0 KiB" rather than 1000-steps.
 */
export function byteTicks(min: number, max: number, count = 4): number[] {
  const top = Math.max(Math.abs(min), Math.abs(max));
  const unit = top >= 1024 ? 1024 ** Math.floor(Math.log(top) / Math.log(1024)) : 1;
  return niceTicks(min / unit, max / unit, count, unit === 1).map((t) => t * unit);
}
