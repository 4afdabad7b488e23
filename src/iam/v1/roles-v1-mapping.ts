import { parseCapabilityNames, shortNameOf } from "../../authz/capabilities.js";
import { v1Resource } from "../../core/v1-face-convert.js";
import type { Capability } from "../../gen/platform/capabilities/capabilities_pb.js";
import { RoleSchema as RoleV1Schema } from "../../gen/platform/iam/v1/roles_pb.js";
import { RoleSchema } from "../../gen/platform/iam/v2/roles_pb.js";

/**
 * A v1 role: the v2 role by table (`uid` → `id`), except its capabilities, which v1 names by their
 * friendly short names (`CAP_REPO_LIST` → `repo.list`); a number this build does not know has no
 * name and is left out, as the hosted service skips unknown capabilities. A body's names are read
 * back by `capabilitiesFromV1Names`.
 */
export const ROLE_V1 = v1Resource({
  v1: RoleV1Schema,
  v2: RoleSchema,
  updatable: ["name", "description", "capabilities"],
  v1Extras: (role) => ({ capabilities: role.capabilities.map(shortNameOf).filter((name) => name !== "") }),
});

export const roleV1Message = ROLE_V1.toV1;

/**
 * Capabilities from the friendly names of a v1 request (`repo.list`; enum names such as
 * `CAP_REPO_LIST` are accepted too). Throws INVALID_ARGUMENT on `field` naming the first unknown name.
 */
export function capabilitiesFromV1Names(field: string, names: readonly string[]): Capability[] {
  return parseCapabilityNames(field, names);
}
