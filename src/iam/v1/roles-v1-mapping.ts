import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { parseCapabilityNames, shortNameOf } from "../../authz/capabilities.js";
import type { Capability } from "../../gen/platform/capabilities/capabilities_pb.js";
import { type Role as RoleV1, RoleSchema as RoleV1Schema } from "../../gen/platform/iam/v1/roles_pb.js";
import { RoleSchema } from "../../gen/platform/iam/v2/roles_pb.js";

/**
 * The v1 shape of a role a v2 handler answered: `uid` becomes `id` and capabilities are named by
 * their friendly short names (`CAP_REPO_LIST` → `repo.list`); a number this build does not know
 * has no name and is left out, as the hosted service skips unknown capabilities.
 */
export function roleV1Message(v2: MessageInitShape<typeof RoleSchema>): RoleV1 {
  const role = create(RoleSchema, v2);
  return create(RoleV1Schema, {
    id: role.uid,
    name: role.name,
    description: role.description,
    capabilities: role.capabilities.map(shortNameOf).filter((name) => name !== ""),
  });
}

/**
 * Capabilities from the friendly names of a v1 request (`repo.list`; enum names such as
 * `CAP_REPO_LIST` are accepted too). Throws INVALID_ARGUMENT on `field` naming the first unknown name.
 */
export function capabilitiesFromV1Names(field: string, names: readonly string[]): Capability[] {
  return parseCapabilityNames(field, names);
}
