// Capabilities as people read them: the short names of the generated enum (`repo.list`), grouped
// by the resource they act on (`repo`: create, delete, list, update).
import { getOption } from "@bufbuild/protobuf";
import { iam } from "wharf/sdk";

/** One capability a custom role may hold. */
export interface CapabilityChoice {
  capability: iam.Capability;
  /** `repo.blobs.get`. */
  shortName: string;
  /** The verb, the short name's last part: `get`. */
  verb: string;
}

/** The capabilities of one resource: `repo.blobs` → get. */
export interface CapabilityGroup {
  /** The short name without its verb: `repo.blobs`. */
  resource: string;
  /** For a heading: `Repo blobs`. */
  label: string;
  capabilities: CapabilityChoice[];
}

/** Every capability a custom role may hold (internal-only ones and UNKNOWN left out), in enum order. */
export const CAPABILITY_CHOICES: readonly CapabilityChoice[] = iam.CapabilitySchema.values
  .filter((v) => v.number !== iam.Capability.UNKNOWN && !getOption(v, iam.internal_only))
  .map((v) => {
    const shortName = getOption(v, iam.short_name) || v.name;
    return {
      capability: v.number as iam.Capability,
      shortName,
      verb: shortName.split(".").at(-1) ?? shortName,
    };
  });

/** The short name of `capability` (`repo.list`), or its number for one this console does not know. */
export function capabilityName(capability: iam.Capability): string {
  return CAPABILITY_CHOICES.find((c) => c.capability === capability)?.shortName ?? `capability ${capability}`;
}

/**
 * `capabilities` grouped by resource, groups in order of first appearance, verbs within a group
 * in the given order. Unknown numbers form a group of their own ("Other").
 */
export function groupCapabilities(capabilities: readonly iam.Capability[]): CapabilityGroup[] {
  const groups = new Map<string, CapabilityGroup>();
  for (const capability of capabilities) {
    const known = CAPABILITY_CHOICES.find((c) => c.capability === capability);
    const choice = known ?? { capability, shortName: `capability ${capability}`, verb: String(capability) };
    const resource = known ? resourceOf(known.shortName) : "other";
    let group = groups.get(resource);
    if (!group) {
      group = { resource, label: labelOf(resource), capabilities: [] };
      groups.set(resource, group);
    }
    group.capabilities.push(choice);
  }
  return [...groups.values()];
}

/** Every capability a custom role may hold, grouped for the picker. */
export const CAPABILITY_GROUPS: readonly CapabilityGroup[] = groupCapabilities(
  CAPABILITY_CHOICES.map((c) => c.capability),
);

function resourceOf(shortName: string): string {
  const dot = shortName.lastIndexOf(".");
  return dot < 0 ? shortName : shortName.slice(0, dot);
}

function labelOf(resource: string): string {
  const words = resource.replace(/[._]/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}
