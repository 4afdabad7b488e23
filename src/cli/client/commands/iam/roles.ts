// `wharf iam roles …`: named sets of capabilities, built-in and custom.
import type { Command } from "commander";
import { RoleSchema } from "../../../../gen/platform/iam/v2/roles_pb.js";
import { listAll } from "../../../../sdk/pages.js";
import { CAPABILITIES, capabilityName, parseCapability } from "../../capabilities.js";
import { type Bind, collect, print } from "../../program.js";
import { groupUid } from "../../resolve.js";
import { field, protoView } from "../../views.js";
import { deleteVerb, listVerb, mask, type ParentFilter } from "./shared.js";

const roleView = protoView(RoleSchema, [
  field("UID", "uid"),
  field("NAME", "name"),
  { header: "CAPABILITIES", cell: (r) => r.capabilities.map(capabilityName).join(", ") },
]);

type Capability = (typeof CAPABILITIES)[number];

const capabilityView = {
  columns: [
    { header: "NAME", cell: (c: Capability) => c.shortName },
    { header: "ENUM", cell: (c: Capability) => c.enumName },
  ],
  id: (c: Capability) => c.shortName || c.enumName,
  json: (c: Capability) => ({ name: c.shortName, enum: c.enumName }),
};

export function registerRoles(iam: Command, bind: Bind): void {
  const roles = iam.command("roles").description("roles: named sets of capabilities");
  listVerb(roles, bind, {
    description: "list roles (built-in ones and those of your groups)",
    parent: "only those defined under this group",
    options: (c) => c.option("--name <name>", "only the one with this name"),
    view: roleView,
    items: (ctx, o: ParentFilter & { name?: string }, uidp) =>
      listAll(ctx.client.iam.roles.listRoles, {
        ...(uidp ? { uidp } : {}),
        name: o.name ?? "",
        orderBy: "name",
      }),
  });
  roles
    .command("create <name>")
    .description("create a custom role")
    .requiredOption("--parent <group>", "the organization or folder it belongs to")
    .requiredOption(
      "--capability <cap>",
      "a capability, e.g. repo.list (repeatable, or comma-separated)",
      collect,
    )
    .option("--description <text>", "what it is for")
    .action(
      bind(
        async (ctx, [name]: [string], o: { parent: string; capability: string[]; description?: string }) => {
          const role = await ctx.client.iam.roles.createRole({
            parent: await groupUid(ctx.client, o.parent),
            role: {
              name,
              description: o.description ?? "",
              capabilities: o.capability.map(parseCapability),
            },
          });
          print(ctx, [role], roleView, true);
        },
      ),
    );
  roles
    .command("update <uid>")
    .description("change a custom role")
    .option("--name <name>", "new name")
    .option("--description <text>", "new description")
    .option("--capability <cap>", "its capabilities, replacing the old (repeatable)", collect)
    .action(
      bind(
        async (ctx, [uid]: [string], o: { name?: string; description?: string; capability?: string[] }) => {
          const role = await ctx.client.iam.roles.updateRole({
            role: {
              uid,
              name: o.name ?? "",
              description: o.description ?? "",
              capabilities: (o.capability ?? []).map(parseCapability),
            },
            updateMask: mask(o, { name: "name", description: "description", capability: "capabilities" }),
          });
          print(ctx, [role], roleView, true);
        },
      ),
    );
  deleteVerb(roles, bind, "delete <uid>", "delete a custom role", "role", (ctx, uid) =>
    ctx.client.iam.roles.deleteRole({ uid }),
  );
  roles
    .command("capabilities")
    .description("list the capabilities a role can hold")
    .action(bind(async (ctx) => print(ctx, CAPABILITIES, capabilityView)));
}
