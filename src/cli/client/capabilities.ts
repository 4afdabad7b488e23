import { getOption } from "@bufbuild/protobuf";
import {
  Capability,
  CapabilitySchema,
  internal_only,
  short_name,
} from "../../gen/platform/capabilities/capabilities_pb.js";
import { UsageError } from "./output.js";

/** A capability as people write it: its short name (`repo.list`) and its enum name. */
export interface CapabilityName {
  capability: Capability;
  shortName: string;
  enumName: string;
}

/** Every capability a role may hold (internal-only ones left out), from the generated enum. */
export const CAPABILITIES: readonly CapabilityName[] = CapabilitySchema.values
  .filter((v) => v.number !== Capability.UNKNOWN && !getOption(v, internal_only))
  .map((v) => ({
    capability: v.number as Capability,
    shortName: getOption(v, short_name),
    enumName: v.name,
  }));

/** The capability `name` names: `repo.list`, `CAP_REPO_LIST` or `cap_repo_list`. Usage error otherwise. */
export function parseCapability(name: string): Capability {
  const found = CAPABILITIES.find((c) => c.shortName === name || c.enumName === name.toUpperCase());
  if (!found) throw new UsageError(`unknown capability "${name}" (see \`wharf iam roles capabilities\`)`);
  return found.capability;
}

/** The short name of `capability` (its enum name when it has none). */
export function capabilityName(capability: Capability): string {
  const found = CAPABILITIES.find((c) => c.capability === capability);
  return found ? found.shortName || found.enumName : String(capability);
}
