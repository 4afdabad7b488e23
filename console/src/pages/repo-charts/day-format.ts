/** `2026-11-20`: a UTC day as the charts' tables and axes write it. */
export function formatDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
