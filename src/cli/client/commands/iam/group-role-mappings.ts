// `wharf iam group-role-mappings …`: roles given to members of an identity provider's external groups.
import type { Command } from "commander";
import { ExternalGroupRoleMappingSchema } from "../../../../gen/platform/iam/v2/external_group_role_mappings_pb.js";
import { listAll } from "../../../../sdk/pages.js";
import { type Bind, print } from "../../program.js";
import { field, protoView } from "../../views.js";
import { deleteVerb, listVerb, type ParentFilter, roleUid } from "./shared.js";

const mappingView = protoView(ExternalGroupRoleMappingSchema, [
  field("UID", "uid"),
  field("IDENTITY PROVIDER", "identityProviderUid"),
  field("EXTERNAL GROUP", "externalGroupId"),
  field("ROLE", "roleUid"),
]);

export function registerGroupRoleMappings(iam: Command, bind: Bind): void {
  const m = iam
    .command("group-role-mappings")
    .description("roles given to members of an identity provider's external groups");
  listVerb(m, bind, {
    description: "list mappings",
    parent: "only those of this group",
    options: (c) => c.option("--identity-provider <uid>", "only those of this provider"),
    view: mappingView,
    items: (ctx, o: ParentFilter & { identityProvider?: string }, uidp) =>
      listAll(ctx.client.iam.externalGroupRoleMappings.listExternalGroupRoleMappings, {
        ...(uidp ? { uidp } : {}),
        identityProviderUid: o.identityProvider ?? "",
      }),
  });
  m.command("create")
    .description("map an external group of an identity provider to a role in its organization")
    .requiredOption("--identity-provider <uid>", "the identity provider")
    .requiredOption("--external-group <id>", "the group id in the provider's groups claim")
    .requiredOption("--role <role>", "the role (uid or built-in name)")
    .action(
      bind(async (ctx, _args, o: { identityProvider: string; externalGroup: string; role: string }) => {
        const provider = o.identityProvider;
        const created = await ctx.client.iam.externalGroupRoleMappings.createExternalGroupRoleMapping({
          parent: provider,
          mapping: {
            externalGroupId: o.externalGroup,
            roleUid: await roleUid(ctx, o.role),
            // The role applies in the provider's organization: the root of its uid.
            scope: provider.split("/")[0] ?? "",
          },
        });
        print(ctx, [created], mappingView, true);
      }),
    );
  deleteVerb(m, bind, "delete <uid>", "delete a mapping", "group role mapping", (ctx, uid) =>
    ctx.client.iam.externalGroupRoleMappings.deleteExternalGroupRoleMapping({ uid }),
  );
}
