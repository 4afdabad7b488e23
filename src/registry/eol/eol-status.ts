import type { EolCycleRow } from "../../storage/eol-store.js";

/** Default grace period after a cycle's EOL date, in calendar months. */
export const DEFAULT_EOL_GRACE_MONTHS = 6;

/** Where a tag is in its life (proto `EolTag.TagStatus`, without the prefix). */
export type TagLifeStatus = "ACTIVE" | "IN_GRACE" | "INACTIVE";

/** Where a tag is with its grace period (proto `EolTag.GraceStatus`, without the prefix). */
export type GraceStatus = "NOT_ELIGIBLE" | "ELIGIBLE" | "ACTIVE" | "BROKEN" | "EXPIRED";

/** A tag's end-of-life state at one instant. */
export interface EolState {
  tagStatus: TagLifeStatus;
  graceStatus: GraceStatus;
  /** The EOL date plus the grace period; absent without an EOL date. */
  gracePeriodExpiryDate?: number;
  /** The cycle is declared end-of-life without a date, so no grace window can be computed. */
  eolBroken: boolean;
  /** The cycle has reached end-of-life: the v2 `deprecated` signal. */
  pastEol: boolean;
}

/**
 * The EOL state of a tag of `cycle` (undefined: the tag matched no cycle) at `now` (ms), with a
 * grace period of `graceMonths` calendar months:
 *
 * - no cycle, or a cycle without an EOL date and not declared EOL: ACTIVE, NOT_ELIGIBLE;
 * - declared EOL without a date: INACTIVE, BROKEN (eolBroken; no window to grant);
 * - before the EOL date: ACTIVE, and ELIGIBLE (NOT_ELIGIBLE when graceMonths is 0);
 * - from the EOL date until the expiry (exclusive): IN_GRACE, ACTIVE;
 * - from the expiry on: INACTIVE, EXPIRED.
 */
export function eolStateAt(cycle: EolCycleRow | undefined, now: number, graceMonths: number): EolState {
  if (cycle?.eolDate === undefined) {
    const broken = cycle?.eolUndated === true;
    return {
      tagStatus: broken ? "INACTIVE" : "ACTIVE",
      graceStatus: broken ? "BROKEN" : "NOT_ELIGIBLE",
      eolBroken: broken,
      pastEol: broken,
    };
  }
  const expiry = addUtcMonths(cycle.eolDate, graceMonths);
  const base = { gracePeriodExpiryDate: expiry, eolBroken: false };
  if (now < cycle.eolDate) {
    return {
      ...base,
      tagStatus: "ACTIVE",
      graceStatus: graceMonths > 0 ? "ELIGIBLE" : "NOT_ELIGIBLE",
      pastEol: false,
    };
  }
  if (now < expiry) return { ...base, tagStatus: "IN_GRACE", graceStatus: "ACTIVE", pastEol: true };
  return { ...base, tagStatus: "INACTIVE", graceStatus: "EXPIRED", pastEol: true };
}

/**
 * `ms` plus `months` calendar months in UTC; a day past the end of the target month clamps to its
 * last day (2025-08-31 + 6 months = 2026-02-28).
 */
export function addUtcMonths(ms: number, months: number): number {
  const d = new Date(ms);
  const target = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1));
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(d.getUTCDate(), lastDay));
  return target.getTime() + (ms - Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
}
