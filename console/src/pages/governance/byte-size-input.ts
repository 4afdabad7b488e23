const UNIT_BYTES: Record<string, number> = {
  "": 1,
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/**
 * A size as the quota form takes it: bytes (`1048576`), decimal units (`10 GB`) or binary ones
 * (`10 GiB`), case-insensitive, fractions allowed (rounded down); empty, `0` or `unlimited` is 0n
 * (no limit). Undefined when the text is no size.
 */
export function parseByteSize(text: string): bigint | undefined {
  const value = text.trim().toLowerCase();
  if (value === "" || value === "unlimited") return 0n;
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/.exec(value);
  const unit = m ? UNIT_BYTES[m[2] as string] : undefined;
  if (!m || unit === undefined) return undefined;
  const bytes = Math.floor(Number(m[1]) * unit);
  return Number.isSafeInteger(bytes) ? BigInt(bytes) : undefined;
}

/** A count as the quota form takes it: a whole number; empty, `0` or `unlimited` is 0n. */
export function parseCount(text: string): bigint | undefined {
  const value = text.trim().toLowerCase();
  if (value === "" || value === "unlimited") return 0n;
  return /^\d{1,15}$/.test(value) ? BigInt(value) : undefined;
}
