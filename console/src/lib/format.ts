// Display helpers: digests, sizes and times as the console shows them.
import type { Timestamp } from "@bufbuild/protobuf/wkt";

export { formatBytes } from "wharf/sdk";

/** `sha256:0123456789ab…` → `sha256:0123456789ab` (12 hex digits, as docker shows image ids). */
export function shortDigest(digest: string): string {
  const [algorithm, hex] = digest.split(":");
  return hex ? `${algorithm}:${hex.slice(0, 12)}` : digest;
}

/** A protobuf Timestamp (or RFC 3339 string) as a Date; undefined when absent. */
export function toDate(value: Timestamp | string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string") return new Date(value);
  return new Date(Number(value.seconds) * 1000 + Math.floor(value.nanos / 1e6));
}

/** `2026-11-25 23:40 UTC`: unambiguous for every reader of a shared screen. */
export function formatTime(value: Timestamp | string | undefined): string {
  const date = toDate(value);
  if (!date || Number.isNaN(date.getTime())) return "—";
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** How long ago, roughly: `5 minutes ago`, `3 days ago`. */
export function formatAgo(value: Timestamp | string | undefined, now: number = Date.now()): string {
  const date = toDate(value);
  if (!date) return "";
  const seconds = Math.round((now - date.getTime()) / 1000);
  const steps: [number, string][] = [
    [60, "second"],
    [60, "minute"],
    [24, "hour"],
    [30, "day"],
    [12, "month"],
    [Number.POSITIVE_INFINITY, "year"],
  ];
  let amount = Math.max(seconds, 0);
  for (const [size, unit] of steps) {
    if (amount < size) return `${amount} ${unit}${amount === 1 ? "" : "s"} ago`;
    amount = Math.floor(amount / size);
  }
  return "";
}

/** The uids of a uidp's ancestors, from the organization down: `a/b/c` → `a`, `a/b`. */
export function ancestorUids(uid: string): string[] {
  const parts = uid.split("/");
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join("/"));
}

/** A console path with a uid (which holds slashes) as its trailing part. */
export function pathWithUid(prefix: string, uid: string): string {
  return `${prefix}/${uid.split("/").map(encodeURIComponent).join("/")}`;
}
