// `wharf iam organizations|folders …`: the groups of the platform, by name or uid.
import type { Command } from "commander";
import { GroupSchema } from "../../../../gen/platform/iam/v2/groups_pb.js";
import { listAll } from "../../../../sdk/pages.js";
import type { CommandContext } from "../../context.js";
import { timeCell } from "../../output.js";
import { type Bind, print } from "../../program.js";
import { groupUid, resolveGroup } from "../../resolve.js";
import { field, protoView } from "../../views.js";
import { collectAll, deleteVerb, describeVerb } from "./shared.js";

const groupView = protoView(GroupSchema, [
  field("UID", "uid"),
  field("NAME", "name"),
  field("DESCRIPTION", "description"),
  { header: "VERIFIED", cell: (g) => (g.verified ? "yes" : "no") },
  { header: "CREATED", cell: (g) => timeCell(g.createTime) },
]);

type CreateOptions = { description?: string };

export function registerGroups(iam: Command, bind: Bind): void {
  const orgs = iam.command("organizations").alias("orgs").description("organizations (top-level groups)");
  orgs
    .command("list")
    .description("list the organizations you can see")
    .option("--name <name>", "only the one with this name")
    .action(
      bind(async (ctx, _args, o: { name?: string }) => {
        const request = { uidp: { inRoot: true }, name: o.name ?? "", orderBy: "name" };
        print(ctx, await collectAll(listAll(ctx.client.iam.groups.listGroups, request)), groupView);
      }),
    );
  orgs
    .command("create <name>")
    .description("create an organization")
    .option("--description <text>", "what it is for")
    .action(
      bind(async (ctx, [name]: [string], o: CreateOptions) => {
        const group = await ctx.client.iam.groups.createGroup({
          parent: "",
          group: { name, description: o.description ?? "" },
        });
        print(ctx, [group], groupView, true);
      }),
    );
  describeVerb(orgs, bind, "describe <org>", "show an organization (by name or uid)", groupView, (ctx, org) =>
    resolveGroup(ctx.client, org),
  );
  for (const [verb, verified] of [
    ["verify", true],
    ["unverify", false],
  ] as const) {
    orgs
      .command(`${verb} <org>`)
      .description(
        verified
          ? "mark an organization as owning the domain it is named after (platform administrator only)"
          : "withdraw an organization's verification (platform administrator only)",
      )
      .action(
        bind(async (ctx, [org]: [string]) => {
          const uid = await groupUid(ctx.client, org);
          const group = await ctx.client.iam.groups.updateGroup({
            group: { uid, verified },
            updateMask: { paths: ["verified"] },
          });
          print(ctx, [group], groupView, true);
        }),
      );
  }
  orgs
    .command("lookup")
    .description("find the verified organization of your email's domain")
    .action(bind(async (ctx) => print(ctx, [await ctx.client.iam.groups.lookupGroup({})], groupView, true)));
  deleteVerb(
    orgs,
    bind,
    "delete <org>",
    "delete an organization (by name or uid)",
    "organization",
    deleteGroup,
  );

  const folders = iam.command("folders").description("folders (groups inside an organization)");
  folders
    .command("list")
    .description("list the folders of an organization")
    .requiredOption("--parent <org>", "the organization (name or uid)")
    .action(
      bind(async (ctx, _args, o: { parent: string }) => {
        const parent = await groupUid(ctx.client, o.parent);
        const uidp = { descendantsOf: parent };
        const all = await collectAll(listAll(ctx.client.iam.groups.listGroups, { uidp, orderBy: "name" }));
        // descendants_of includes the group itself: the folders are the others.
        print(
          ctx,
          all.filter((g) => g.uid !== parent),
          groupView,
        );
      }),
    );
  folders
    .command("create <name>")
    .description("create a folder")
    .requiredOption("--parent <group>", "the organization or folder it goes in (ORG[/FOLDER] or uid)")
    .option("--description <text>", "what it is for")
    .action(
      bind(async (ctx, [name]: [string], o: CreateOptions & { parent: string }) => {
        const parent = await groupUid(ctx.client, o.parent);
        const group = await ctx.client.iam.groups.createGroup({
          parent,
          group: { name, description: o.description ?? "" },
        });
        print(ctx, [group], groupView, true);
      }),
    );
  describeVerb(folders, bind, "describe <folder>", "show a folder (ORG/FOLDER or uid)", groupView, (ctx, f) =>
    resolveGroup(ctx.client, f),
  );
  deleteVerb(folders, bind, "delete <folder>", "delete a folder (ORG/FOLDER or uid)", "folder", deleteGroup);
}

async function deleteGroup(ctx: CommandContext, ref: string): Promise<string> {
  const uid = await groupUid(ctx.client, ref);
  await ctx.client.iam.groups.deleteGroup({ uid });
  return uid;
}
