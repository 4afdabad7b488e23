import { GroupAccountAssociations } from "../../gen/platform/iam/v1/account_associations_pb.js";
import { ExternalGroupRoleMappings } from "../../gen/platform/iam/v1/external_group_role_mappings_pb.js";
import { GroupInvites } from "../../gen/platform/iam/v1/group_invites_pb.js";
import { Groups } from "../../gen/platform/iam/v1/groups_pb.js";
import { Identities } from "../../gen/platform/iam/v1/identities_pb.js";
import { IdentityProviders } from "../../gen/platform/iam/v1/identity_providers_pb.js";
import { RoleBindings } from "../../gen/platform/iam/v1/role_bindings_pb.js";
import { Roles } from "../../gen/platform/iam/v1/roles_pb.js";
import { Terms } from "../../gen/platform/iam/v1/terms_pb.js";
import type { ServiceTable } from "../service-clients.js";

/** The services of the IAM reference API v1 (`client.iamV1.…`). */
export const IAM_V1_SERVICES = {
  groups: Groups,
  identities: Identities,
  roles: Roles,
  roleBindings: RoleBindings,
  terms: Terms,
  identityProviders: IdentityProviders,
  groupAccountAssociations: GroupAccountAssociations,
  groupInvites: GroupInvites,
  externalGroupRoleMappings: ExternalGroupRoleMappings,
} as const satisfies ServiceTable[string];
