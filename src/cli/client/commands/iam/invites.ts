// `wharf iam invites …`: invite codes that bind whoever redeems them to a role.
import type { Command } from "commander";
import { GroupInviteSchema } from "../../../../gen/platform/iam/v2/group_invites_pb.js";
import { listAll } from "../../../../sdk/pages.js";
import { timeCell, UsageError } from "../../output.js";
import { callPlainRoute } from "../../plain-http.js";
import { type Bind, print } from "../../program.js";
import { groupUid } from "../../resolve.js";
import { field, protoView } from "../../views.js";
import { deleteVerb, listVerb, roleUid } from "./shared.js";

const inviteView = protoView(GroupInviteSchema, [
  field("UID", "uid"),
  { header: "ROLE", cell: (i) => i.role?.name || i.roleUid },
  field("EMAIL", "email"),
  { header: "EXPIRES", cell: (i) => timeCell(i.expirationTime) },
  { header: "SINGLE USE", cell: (i) => (i.singleUse ? "yes" : "no") },
  field("CODE", "code"),
]);

type CreateOptions = { parent: string; role: string; email?: string; ttl?: string; singleUse?: boolean };

export function registerInvites(iam: Command, bind: Bind): void {
  const inv = iam.command("invites").description("invite codes that bind whoever redeems them to a role");
  inv
    .command("create")
    .description("create an invite code")
    .requiredOption("--parent <group>", "the organization or folder")
    .requiredOption("--role <role>", "the role it grants (uid or built-in name)")
    .option("--email <email>", "only this person may redeem it")
    .option("--ttl <duration>", "how long it is valid, e.g. 48h (default: the server's)")
    .option("--single-use", "it works once")
    .action(
      bind(async (ctx, _args, o: CreateOptions) => {
        const ttl = o.ttl === undefined ? undefined : durationSeconds(o.ttl);
        const invite = await ctx.client.iam.groupInvites.createGroupInvite({
          parent: await groupUid(ctx.client, o.parent),
          invite: {
            roleUid: await roleUid(ctx, o.role),
            email: o.email ?? "",
            singleUse: o.singleUse === true,
            ...(ttl === undefined ? {} : { ttl: { seconds: BigInt(ttl), nanos: 0 } }),
          },
        });
        print(ctx, [invite], { ...inviteView, id: (i) => i.code }, true);
      }),
    );
  listVerb(inv, bind, {
    description: "list invites",
    parent: "only those of this group",
    view: inviteView,
    items: (ctx, _o, uidp) => listAll(ctx.client.iam.groupInvites.listGroupInvites, uidp ? { uidp } : {}),
  });
  deleteVerb(inv, bind, "delete <uid>", "delete an invite", "invite", (ctx, uid) =>
    ctx.client.iam.groupInvites.deleteGroupInvite({ uid }),
  );
  inv
    .command("accept <code>")
    .description("redeem an invite code: you get its role in its group")
    .action(
      bind(async (ctx, [code]: [string]) => {
        const url = new URL("/auth/v1/register", ctx.apiUrl);
        const body = await callPlainRoute(ctx, url, "POST", { code });
        ctx.stdout.write(
          ctx.format === "yaml"
            ? (await import("yaml")).stringify(body)
            : `${JSON.stringify(body, null, 2)}\n`,
        );
      }),
    );
}

function durationSeconds(value: string): number {
  const match = /^(\d+)(s|m|h|d)$/.exec(value);
  if (!match) throw new UsageError(`--ttl must be a duration like 48h or 7d (got "${value}")`);
  const unit = { s: 1, m: 60, h: 3600, d: 86400 }[match[2] as "s" | "m" | "h" | "d"];
  return Number(match[1]) * unit;
}
