import { parseDurationSeconds } from "../../core/duration.js";
import { invalidArgument, isDomainError } from "../../core/errors.js";
import { REPOSITORY_PATH } from "../../core/registry-name.js";
import { createSinkAddressPolicy, NO_SINK_EXCEPTIONS } from "../../events/sink-address-policy.js";
import { systemSinkResolver } from "../../events/sink-host.js";
import { validateSink, validateSinkAddresses } from "../../events/sink-url.js";
import type { ReplicationDirection, ReplicationTrigger } from "../../storage/replication-store.js";
import { patternProblem } from "../tag-patterns.js";
import type { ReplicationDeps } from "./replication-deps.js";

/** A rule's name: 1 to 63 of [a-z0-9._-], starting with a letter or digit. */
const RULE_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;
/** Shortest interval between INTERVAL runs. */
export const MIN_INTERVAL_MS = 60_000;
/** Longest interval between INTERVAL runs. */
export const MAX_INTERVAL_MS = 366 * 24 * 3_600_000;
/** Longest remote username or password. */
const MAX_CREDENTIAL_LENGTH = 4096;

export function validateRuleName(name: string): string {
  if (!RULE_NAME.test(name)) {
    throw invalidArgument(
      "name",
      `name must be 1 to 63 of a-z, 0-9, ".", "_", "-", starting with a letter or digit (got "${name}")`,
    );
  }
  return name;
}

/** `repo_pattern` as stored ("" is "**"): a glob of tag-patterns.ts (repo kind, no exclusion). */
export function validateRepoPattern(pattern: string): string {
  const value = pattern === "" ? "**" : pattern;
  const problem = patternProblem(value, "repo", false);
  if (problem !== undefined) throw invalidArgument("repo_pattern", problem);
  return value;
}

/** `tag_pattern` as stored ("" stays "": every tag). */
export function validateTagPattern(pattern: string): string {
  if (pattern === "") return "";
  const problem = patternProblem(pattern, "tag", false);
  if (problem !== undefined) throw invalidArgument("tag_pattern", problem);
  return pattern;
}

/** `destination`: "" or a registry path prefix (`mirror`, `team/mirror`), no leading or trailing `/`. */
export function validateDestination(destination: string): string {
  if (destination === "") return "";
  if (destination.length > 200 || !REPOSITORY_PATH.test(destination)) {
    throw invalidArgument(
      "destination",
      `destination must be "" or a registry path prefix: lowercase components separated by "/" (got "${destination}")`,
    );
  }
  return destination;
}

/** The interval in ms: required (1m to 366d) for INTERVAL rules, "" otherwise. */
export function intervalMsOf(trigger: ReplicationTrigger, interval: string): number {
  if (trigger !== "INTERVAL") {
    if (interval !== "") throw invalidArgument("interval", "interval is only for INTERVAL rules");
    return 0;
  }
  if (interval === "") throw invalidArgument("interval", "interval is required for INTERVAL rules");
  const seconds = /^\d+[smhd]$/.test(interval) ? parseDurationSeconds(interval) : undefined;
  const ms = seconds === undefined ? undefined : seconds * 1000;
  if (ms === undefined || ms < MIN_INTERVAL_MS || ms > MAX_INTERVAL_MS) {
    throw invalidArgument(
      "interval",
      `interval must be a duration from 1m to 366d: a positive integer and a unit s, m, h or d (got "${interval}")`,
    );
  }
  return ms;
}

/** ON_PUSH only for PUSH rules. */
export function validateTrigger(direction: ReplicationDirection, trigger: ReplicationTrigger): void {
  if (trigger === "ON_PUSH" && direction !== "PUSH") {
    throw invalidArgument(
      "trigger",
      "ON_PUSH is only for PUSH rules (a PULL rule runs by INTERVAL or MANUAL)",
    );
  }
}

export function validateUsername(username: string): string {
  if (
    username.length > MAX_CREDENTIAL_LENGTH ||
    [...username].some((c) => c === ":" || c.charCodeAt(0) < 0x20)
  ) {
    throw invalidArgument(
      "remote.username",
      'username must be at most 4096 characters, without control characters or ":"',
    );
  }
  return username;
}

export function validatePassword(password: string): string {
  if (password.length > MAX_CREDENTIAL_LENGTH) {
    throw invalidArgument("remote.password", "password must be at most 4096 characters");
  }
  return password;
}

/**
 * The remote URL, normalised, as webhook sinks are checked (sink-url.ts): an https URL (http only
 * with --events-allow-http, loopback hosts included, as the remote client does), no credentials, no query nor fragment, whose host
 * resolves only to addresses the sinks' policy allows. INVALID_ARGUMENT on `remote.url` otherwise.
 * The trailing `/` is dropped (a path is the remote's namespace prefix).
 */
export async function validateRemoteUrl(deps: ReplicationDeps, url: string): Promise<string> {
  const field = "remote.url";
  const renamed = (err: unknown): never => {
    if (!isDomainError(err)) throw err;
    const said = err.details.fieldViolations?.[0]?.description ?? err.message;
    throw invalidArgument(field, said.replace(/\bsink\b/g, "remote URL"));
  };
  let normalised: string;
  try {
    normalised = validateSink(url, deps.allowHttpSinks ?? false);
  } catch (err) {
    return renamed(err);
  }
  const parsed = new URL(normalised);
  if (parsed.search !== "") throw invalidArgument(field, "remote URL must not have a query");
  // Unlike a sink, a loopback remote gets no http exception: the remote client allows http only with the flag.
  if (parsed.protocol === "http:" && !deps.allowHttpSinks) {
    throw invalidArgument(field, "remote URL must use https (plain http needs --events-allow-http)");
  }
  try {
    await validateSinkAddresses(
      normalised,
      deps.sinkAddresses ?? createSinkAddressPolicy(NO_SINK_EXCEPTIONS),
      deps.resolveSinkHost ?? systemSinkResolver,
    );
  } catch (err) {
    return renamed(err);
  }
  return normalised.replace(/\/+$/, "");
}
