import { isUidp } from "../core/uidp.js";
import type { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import { capabilityFromName } from "./capabilities.js";
import { minimalRoots } from "./subtrees.js";

/**
 * Limits a token carries on top of its identity's role bindings (issued by the STS when a caller
 * asks for `scopes` or `cap`). Restrictions only ever narrow access; they never grant anything.
 */
export interface TokenRestrictions {
  /** Subtree roots the token is limited to (minimal); undefined when the token is not limited. */
  scopes?: readonly string[];
  /** Capabilities the token is limited to; undefined when the token is not limited. */
  caps?: ReadonlySet<Capability>;
}

/** Claim `scope`: group uidps. Claim `cap`: capability short names (enum names also accepted). */
export const SCOPE_CLAIM = "scope";
export const CAP_CLAIM = "cap";

/** The claim's entries: a JSON array of strings, or one space-separated string (OAuth style). */
function entries(value: unknown): string[] | undefined {
  if (typeof value === "string") return value.split(" ").filter((s) => s !== "");
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value;
  return undefined;
}

/**
 * Reads the restrictions from verified token claims. A claim that is absent means "not limited".
 * Anything present but unreadable fails closed: a `scope`/`cap` claim of the wrong shape limits the
 * token to nothing, and entries that are not valid uidps / known capabilities are ignored (so they
 * grant nothing). An empty list therefore also limits the token to nothing.
 */
export function restrictionsOf(claims: Readonly<Record<string, unknown>>): TokenRestrictions {
  const out: TokenRestrictions = {};
  if (claims[SCOPE_CLAIM] !== undefined) {
    out.scopes = minimalRoots((entries(claims[SCOPE_CLAIM]) ?? []).filter(isUidp));
  }
  if (claims[CAP_CLAIM] !== undefined) {
    const caps = (entries(claims[CAP_CLAIM]) ?? []).map(capabilityFromName);
    out.caps = new Set(caps.filter((c): c is Capability => c !== undefined));
  }
  return out;
}
