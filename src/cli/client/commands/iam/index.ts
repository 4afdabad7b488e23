// `wharf iam …`: one module per noun (organizations and folders, identities, roles, role
// bindings, identity providers, invites, account associations, group role mappings, terms).
import type { Command } from "commander";
import { IAM_SERVICES } from "../../../../sdk/services/iam.js";
import { type BindFor, subcommand } from "../../program.js";
import { CLIENT_GROUPS } from "../../routing.js";
import { registerAccountAssociations } from "./account-associations.js";
import { registerGroupRoleMappings } from "./group-role-mappings.js";
import { registerGroups } from "./groups.js";
import { registerIdentities } from "./identities.js";
import { registerIdentityProviders } from "./identity-providers.js";
import { registerInvites } from "./invites.js";
import { registerRoleBindings } from "./role-bindings.js";
import { registerRoles } from "./roles.js";
import { registerTerms } from "./terms.js";

/** The services `wharf iam` calls: the IAM domain's (only these load: see leanClient). */
const SERVICES = { iam: IAM_SERVICES };

/** `wharf iam …`: organizations, folders, identities, roles, bindings, providers, invites, terms. */
export function registerIam(program: Command, bindFor: BindFor): void {
  const bind = bindFor(SERVICES);
  const iam = subcommand(program, "iam", CLIENT_GROUPS.iam);
  registerGroups(iam, bind);
  registerIdentities(iam, bind);
  registerRoles(iam, bind);
  registerRoleBindings(iam, bind);
  registerIdentityProviders(iam, bind);
  registerInvites(iam, bind);
  registerAccountAssociations(iam, bind);
  registerGroupRoleMappings(iam, bind);
  registerTerms(iam, bind);
}
