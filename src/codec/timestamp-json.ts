/** Seconds of 0001-01-01T00:00:00Z, the earliest Timestamp protobuf JSON can write. */
const MIN_SECONDS = -62_135_596_800;
/** Seconds of 9999-12-31T23:59:59Z, the latest (any nanos on top are allowed). */
const MAX_SECONDS = 253_402_300_799;
const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => (i < 10 ? `0${i}` : `${i}`));
/** `.000` … `.999`: stored times have millisecond precision. */
const MILLIS = Array.from({ length: 1000 }, (_, i) => `.${String(i).padStart(3, "0")}`);
// The date part of the last day formatted: the timestamps of one response mostly share a day.
let lastDay = Number.NaN;
let lastDate = "";

/**
 * The protobuf JSON form of a `google.protobuf.Timestamp`, exactly as protobuf-es `toJson` writes
 * it: RFC 3339 in UTC with `Z`, and 0, 3, 6 or 9 fractional digits (the fewest that hold `nanos`).
 * Throws, like protobuf-es, outside 0001-01-01 … 9999-12-31 or for nanos outside 0 … 999,999,999.
 *
 * protobuf-es parses two date strings and formats through `Date#toISOString` per call, which
 * dominated the cost of a 50-item list response; this is plain integer arithmetic.
 */
export function timestampToJson(seconds: bigint | number, nanos: number): string {
  const s = Number(seconds);
  if (!(s >= MIN_SECONDS && s <= MAX_SECONDS)) {
    throw new Error(
      "cannot encode google.protobuf.Timestamp to JSON: must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z inclusive",
    );
  }
  if (!(nanos >= 0 && nanos <= 999_999_999)) {
    throw new Error("cannot encode google.protobuf.Timestamp to JSON: nanos must be in 0 … 999999999");
  }
  const days = Math.floor(s / 86_400);
  const secondOfDay = s - days * 86_400;
  const hour = Math.floor(secondOfDay / 3600);
  const minute = Math.floor((secondOfDay % 3600) / 60);
  const second = secondOfDay % 60;
  if (days !== lastDay) {
    lastDate = civilDate(days);
    lastDay = days;
  }
  return `${lastDate}T${TWO_DIGITS[hour]}:${TWO_DIGITS[minute]}:${TWO_DIGITS[second]}${fraction(nanos)}Z`;
}

/** `YYYY-MM-DD` of a day number (days since 1970-01-01), proleptic Gregorian (H. Hinnant's civil_from_days). */
function civilDate(days: number): string {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153); // 0 = March
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1;
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return `${String(year).padStart(4, "0")}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]}`;
}

function fraction(nanos: number): string {
  if (nanos === 0) return "";
  if (nanos % 1_000_000 === 0) return MILLIS[nanos / 1_000_000]!;
  const digits = String(nanos + 1_000_000_000).slice(1);
  if (nanos % 1_000_000 === 0) return `.${digits.slice(0, 3)}`;
  if (nanos % 1000 === 0) return `.${digits.slice(0, 6)}`;
  return `.${digits}`;
}
