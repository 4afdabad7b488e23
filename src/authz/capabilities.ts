import { getOption } from "@bufbuild/protobuf";
import { invalidArgument } from "../core/errors.js";
import {
  Capability,
  CapabilitySchema,
  internal_only,
  short_name,
} from "../gen/platform/capabilities/capabilities_pb.js";

/** Facts about one capability, read once from the proto descriptor. */
interface CapabilityInfo {
  cap: Capability;
  enumName: string;
  shortName: string;
  internalOnly: boolean;
}

const infos: CapabilityInfo[] = CapabilitySchema.values
  .filter((v) => v.number !== Capability.UNKNOWN)
  .map((v) => ({
    cap: v.number as Capability,
    enumName: v.name,
    shortName: getOption(v, short_name),
    internalOnly: getOption(v, internal_only),
  }))
  .sort((a, b) => a.cap - b.cap);

const byNumber = new Map(infos.map((i) => [i.cap as number, i]));
const byShortName = new Map(infos.filter((i) => i.shortName !== "").map((i) => [i.shortName, i]));
const byEnumName = new Map(infos.map((i) => [i.enumName, i]));

/** Every capability of the enum except UNKNOWN, ascending by number (internal-only ones included). */
export const ALL_CAPABILITIES: readonly Capability[] = Object.freeze(infos.map((i) => i.cap));

/** True when `n` is a capability number this build knows (UNKNOWN = 0 is not one). */
export function isKnownCapability(n: number): n is Capability {
  return byNumber.has(n);
}

/**
 * The friendly short name of `cap` from the `short_name` enum-value option (`CAP_REPO_LIST` →
 * `repo.list`); "" for UNKNOWN or a number this build does not know.
 */
export function shortNameOf(cap: Capability): string {
  return byNumber.get(cap)?.shortName ?? "";
}

/** The proto enum value name of `cap` (`CAP_REPO_LIST`); "" for UNKNOWN or an unknown number. */
export function enumNameOf(cap: Capability): string {
  return byNumber.get(cap)?.enumName ?? "";
}

/** The capability whose short name is `name` (`repo.list` → CAP_REPO_LIST), or undefined. */
export function capabilityFromShortName(name: string): Capability | undefined {
  return byShortName.get(name)?.cap;
}

/** The capability whose enum value name is `name` (`CAP_REPO_LIST`), or undefined (also for UNKNOWN). */
export function capabilityFromEnumName(name: string): Capability | undefined {
  return byEnumName.get(name)?.cap;
}

/** The capability named `name` by its short name or its enum value name, or undefined. */
export function capabilityFromName(name: string): Capability | undefined {
  return capabilityFromShortName(name) ?? capabilityFromEnumName(name);
}

/**
 * True when `cap` carries the `internal_only` option: it may never be in a customer role, and a
 * role holding one must also hold CAP_INTERNAL. False for unknown numbers.
 */
export function isInternalOnly(cap: Capability): boolean {
  return byNumber.get(cap)?.internalOnly ?? false;
}

/** Sorted ascending, duplicates removed. */
function normalized(caps: Iterable<Capability>): Capability[] {
  return [...new Set(caps)].sort((a, b) => a - b);
}

/**
 * Parses capability names (short names such as `repo.list`, or enum names such as `CAP_REPO_LIST`)
 * into capabilities, ascending and without duplicates. Throws INVALID_ARGUMENT on `field` naming
 * the first name that is not a known capability.
 */
export function parseCapabilityNames(field: string, names: readonly string[]): Capability[] {
  const out: Capability[] = [];
  for (const name of names) {
    const cap = capabilityFromName(name);
    if (cap === undefined) throw invalidArgument(field, `unknown capability "${name}"`);
    out.push(cap);
  }
  return normalized(out);
}

/**
 * Validates capability numbers from a request (e.g. a Role's `capabilities`): each must be a known
 * capability (UNKNOWN and numbers this build does not know are rejected). Internal-only
 * capabilities are rejected unless `allowInternal`, and even then only together with
 * CAP_INTERNAL. Returns them ascending without duplicates; throws INVALID_ARGUMENT on `field`.
 */
export function validateCapabilities(
  field: string,
  caps: readonly number[],
  options: { allowInternal?: boolean } = {},
): Capability[] {
  for (const n of caps) {
    if (!isKnownCapability(n)) throw invalidArgument(field, `unknown capability ${n}`);
    if (!isInternalOnly(n)) continue;
    if (!options.allowInternal) {
      throw invalidArgument(field, `capability ${enumNameOf(n)} is internal-only`);
    }
    if (!caps.includes(Capability.CAP_INTERNAL)) {
      throw invalidArgument(field, `internal-only capability ${enumNameOf(n)} requires CAP_INTERNAL`);
    }
  }
  return normalized(caps as Capability[]);
}

/**
 * The known capabilities among stored numbers, ascending without duplicates. Numbers this build
 * does not know (deleted or newer capabilities) are skipped rather than failing the role.
 */
export function knownCapabilities(caps: readonly number[]): Capability[] {
  return normalized(caps.filter(isKnownCapability));
}
