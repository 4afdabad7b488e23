/** The source of "now" for domain code; tests inject a fixed or stepping clock. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** RFC 3339 UTC with millisecond precision, e.g. `2026-01-28T12:54:21.189Z`. */
export function formatTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}
