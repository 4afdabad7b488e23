/**
 * Parses a duration like `90s`, `30m`, `12h`, `720h`, `7d` or plain seconds into seconds.
 * Returns undefined for anything else (including zero or negative values).
 */
export function parseDurationSeconds(value: string): number | undefined {
  const match = /^(\d+)(s|m|h|d)?$/.exec(value.trim());
  if (!match) return undefined;
  const n = Number(match[1]);
  const unit = { s: 1, m: 60, h: 3600, d: 86400 }[(match[2] ?? "s") as "s" | "m" | "h" | "d"];
  const seconds = n * unit;
  return seconds > 0 && Number.isSafeInteger(seconds) ? seconds : undefined;
}
