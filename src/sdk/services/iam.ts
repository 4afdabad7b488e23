import { AccountAssociationsService } from "../../gen/platform/iam/v2/account_associations_pb.js";
import { ExternalGroupRoleMappingsService } from "../../gen/platform/iam/v2/external_group_role_mappings_pb.js";
import { GroupInvitesService } from "../../gen/platform/iam/v2/group_invites_pb.js";
import { GroupsService } from "../../gen/platform/iam/v2/groups_pb.js";
import { IdentitiesService } from "../../gen/platform/iam/v2/identities_pb.js";
import { IdentityProvidersService } from "../../gen/platform/iam/v2/identity_providers_pb.js";
import { RoleBindingsService } from "../../gen/platform/iam/v2/role_bindings_pb.js";
import { RolesService } from "../../gen/platform/iam/v2/roles_pb.js";
import { TermsService } from "../../gen/platform/iam/v2/terms_pb.js";
import type { ServiceTable } from "../service-clients.js";

/** The services of the IAM domain (`client.iam.…`). */
export const IAM_SERVICES = {
  groups: GroupsService,
  identities: IdentitiesService,
  roles: RolesService,
  roleBindings: RoleBindingsService,
  identityProviders: IdentityProvidersService,
  accountAssociations: AccountAssociationsService,
  groupInvites: GroupInvitesService,
  externalGroupRoleMappings: ExternalGroupRoleMappingsService,
  terms: TermsService,
} as const satisfies ServiceTable[string];
