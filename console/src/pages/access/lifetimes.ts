/** A lifetime a form offers: its label and its length in seconds. */
export interface Lifetime {
  label: string;
  seconds: number;
}

const HOUR = 3600;
const DAY = 24 * HOUR;

/** Invite lifetimes (the API allows at most 30 days). */
export const INVITE_LIFETIMES: readonly Lifetime[] = [
  { label: "1 hour", seconds: HOUR },
  { label: "1 day", seconds: DAY },
  { label: "7 days", seconds: 7 * DAY },
  { label: "30 days", seconds: 30 * DAY },
];

/** Pull-token lifetimes (at most 8760 hours, as `wharf auth pull-token create --ttl`). */
export const PULL_TOKEN_LIFETIMES: readonly Lifetime[] = [
  { label: "1 day", seconds: DAY },
  { label: "7 days", seconds: 7 * DAY },
  { label: "30 days", seconds: 30 * DAY },
  { label: "90 days", seconds: 90 * DAY },
  { label: "1 year", seconds: 365 * DAY },
];
