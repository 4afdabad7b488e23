/** One day in milliseconds; the days of reports and feeds are UTC days. */
export const DAY_MS = 24 * 60 * 60 * 1000;

/** 00:00 UTC of the day holding `ms` (ms since the epoch). */
export function startOfDay(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** `YYYY-MM-DD` of the UTC day holding `ms`. */
export function utcDayName(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
