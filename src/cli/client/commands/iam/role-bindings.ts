// `wharf iam role-bindings …`: an identity holds a role in a group.
import type { Command } from "commander";
import { RoleBindingSchema } from "../../../../gen/platform/iam/v2/role_bindings_pb.js";
import { listAll } from "../../../../sdk/pages.js";
import { type Bind, print } from "../../program.js";
import { groupUid } from "../../resolve.js";
import { field, protoView } from "../../views.js";
import { deleteVerb, listVerb, type ParentFilter, roleUid } from "./shared.js";

const bindingView = protoView(RoleBindingSchema, [
  field("UID", "uid"),
  { header: "IDENTITY", cell: (b) => b.identity?.name || b.identityUid },
  { header: "ROLE", cell: (b) => b.role?.name || b.roleUid },
  { header: "GROUP", cell: (b) => b.group?.name ?? "" },
]);

export function registerRoleBindings(iam: Command, bind: Bind): void {
  const rb = iam.command("role-bindings").description("role bindings: an identity holds a role in a group");
  listVerb(rb, bind, {
    description: "list role bindings",
    parent: "only those in this organization or folder",
    options: (c) => c.option("--identity <uid>", "only those of this identity"),
    view: bindingView,
    items: (ctx, o: ParentFilter & { identity?: string }, uidp) =>
      listAll(ctx.client.iam.roleBindings.listRoleBindings, {
        ...(uidp ? { uidp } : {}),
        identity: o.identity ?? "",
      }),
  });
  rb.command("create")
    .description("bind an identity to a role in a group")
    .requiredOption("--parent <group>", "the organization or folder")
    .requiredOption("--identity <uid>", "the identity")
    .requiredOption("--role <role>", "the role (uid, or the name of a built-in role such as registry.pull)")
    .action(
      bind(async (ctx, _args, o: { parent: string; identity: string; role: string }) => {
        const binding = await ctx.client.iam.roleBindings.createRoleBinding({
          parent: await groupUid(ctx.client, o.parent),
          roleBinding: { identityUid: o.identity, roleUid: await roleUid(ctx, o.role) },
        });
        print(ctx, [binding], bindingView, true);
      }),
    );
  rb.command("update <uid>")
    .description("give a binding another role")
    .requiredOption("--role <role>", "the new role (uid or built-in name)")
    .action(
      bind(async (ctx, [uid]: [string], o: { role: string }) => {
        const binding = await ctx.client.iam.roleBindings.updateRoleBinding({
          roleBinding: { uid, roleUid: await roleUid(ctx, o.role) },
          updateMask: { paths: ["role_uid"] },
        });
        print(ctx, [binding], bindingView, true);
      }),
    );
  deleteVerb(rb, bind, "delete <uid>", "delete a role binding", "role binding", (ctx, uid) =>
    ctx.client.iam.roleBindings.deleteRoleBinding({ uid }),
  );
}
