import { toTimestamp } from "../../core/api-convert.js";
import { parseDurationSeconds } from "../../core/duration.js";
import { invalidArgument } from "../../core/errors.js";
import type { Upstream } from "../../gen/platform/registry/v2/upstreams_pb.js";
import type { UpstreamRow } from "../../storage/upstream-store.js";

/** The tag TTL of an upstream created without one. */
export const DEFAULT_TAG_TTL_MS = 10 * 60_000;
/** Shortest tag TTL: below it every pull of a tag would ask the upstream. */
export const MIN_TAG_TTL_MS = 1000;
/** Longest tag TTL: a moved upstream tag is seen within a week at the latest. */
export const MAX_TAG_TTL_MS = 7 * 86_400_000;
/** Longest user name and password accepted. */
const MAX_USERNAME = 256;
const MAX_PASSWORD = 4096;

/**
 * The API message of a stored upstream. The password is never in it (write-only); `hasPassword`
 * says whether one is stored.
 */
export function upstreamMessage(row: UpstreamRow): Upstream {
  return {
    $typeName: "platform.registry.v2.Upstream",
    uid: row.uid,
    name: row.name,
    url: row.url,
    username: row.username,
    password: "",
    tagTtl: formatTtl(row.tagTtlMs),
    createTime: toTimestamp(row.createTime),
    updateTime: toTimestamp(row.updateTime),
    hasPassword: row.passwordSealed !== "",
  };
}

/** `ms` in its largest exact unit: 600000 → "10m", 90000 → "90s", 604800000 → "7d". */
export function formatTtl(ms: number): string {
  const seconds = Math.round(ms / 1000);
  for (const [unit, size] of [
    ["d", 86_400],
    ["h", 3600],
    ["m", 60],
  ] as const) {
    if (seconds % size === 0) return `${seconds / size}${unit}`;
  }
  return `${seconds}s`;
}

/**
 * The tag TTL `text` asks for, in ms: "" is the default (10m); otherwise a duration of
 * src/core/duration.ts ("90s", "10m", "12h", "7d") between 1s and 7d. INVALID_ARGUMENT on
 * `tag_ttl` otherwise.
 */
export function parseTagTtl(text: string): number {
  if (text === "") return DEFAULT_TAG_TTL_MS;
  const seconds = parseDurationSeconds(text);
  if (seconds === undefined) {
    throw invalidArgument(
      "tag_ttl",
      `tag_ttl must be a duration like "90s", "10m", "12h" or "7d" (got "${text.slice(0, 50)}")`,
    );
  }
  const ms = seconds * 1000;
  if (ms < MIN_TAG_TTL_MS || ms > MAX_TAG_TTL_MS) {
    throw invalidArgument("tag_ttl", `tag_ttl must be between 1s and 7d (got "${text}")`);
  }
  return ms;
}

/**
 * Checks an upstream's credentials: a user name of printable characters without ":" (Basic
 * authentication's separator), a password only with a user name. The password's value is never
 * put in an error.
 */
export function validateCredentials(username: string, password: string): void {
  if (
    username.length > MAX_USERNAME ||
    !/^[\x21-\x7e\u00a0-\uffff]*$/.test(username) ||
    username.includes(":")
  ) {
    throw invalidArgument(
      "username",
      `username must be at most ${MAX_USERNAME} printable characters without spaces or ":"`,
    );
  }
  if (password.length > MAX_PASSWORD || [...password].some((c) => c < " " || c === "\x7f")) {
    throw invalidArgument(
      "password",
      `password must be at most ${MAX_PASSWORD} characters without control characters`,
    );
  }
  if (password !== "" && username === "") {
    throw invalidArgument(
      "password",
      "a password needs a username (Basic credentials and the token flow send both)",
    );
  }
}
