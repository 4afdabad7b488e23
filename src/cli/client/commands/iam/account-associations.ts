// `wharf iam account-associations …`: cloud accounts associated with a group.
import type { Command } from "commander";
import { AccountAssociationSchema } from "../../../../gen/platform/iam/v2/account_associations_pb.js";
import { listAll } from "../../../../sdk/pages.js";
import { type Bind, print } from "../../program.js";
import { groupUid } from "../../resolve.js";
import { field, protoView } from "../../views.js";
import { deleteVerb, describeVerb, listVerb, mask } from "./shared.js";

const associationView = protoView(AccountAssociationSchema, [
  field("UID", "uid"),
  field("NAME", "name"),
  {
    header: "ACCOUNTS",
    cell: (a) =>
      [
        a.amazon ? `amazon ${a.amazon.account}` : "",
        a.google ? `google ${a.google.projectId}` : "",
        a.azure ? `azure ${a.azure.tenantId}` : "",
        a.github ? "github" : "",
      ]
        .filter((s) => s !== "")
        .join(", "),
  },
]);

/** The options of `accountOptions`. */
type AccountOptions = {
  amazonAccount?: string;
  googleProjectId?: string;
  googleProjectNumber?: string;
  azureTenantId?: string;
  description?: string;
};

const association = (o: AccountOptions) => ({
  description: o.description ?? "",
  ...(o.amazonAccount ? { amazon: { account: o.amazonAccount } } : {}),
  ...(o.googleProjectId
    ? {
        google: {
          projectId: o.googleProjectId,
          projectNumber: o.googleProjectNumber ?? "",
        },
      }
    : {}),
  ...(o.azureTenantId ? { azure: { tenantId: o.azureTenantId } } : {}),
});

export function registerAccountAssociations(iam: Command, bind: Bind): void {
  const aa = iam.command("account-associations").description("cloud accounts associated with a group");
  listVerb(aa, bind, {
    description: "list account associations",
    parent: "only those of this group",
    view: associationView,
    items: (ctx, _o, uidp) =>
      listAll(ctx.client.iam.accountAssociations.listAccountAssociations, uidp ? { uidp } : {}),
  });
  const accountOptions = (c: Command) =>
    c
      .option("--amazon-account <id>", "an AWS account id")
      .option("--google-project-id <id>", "a Google Cloud project id")
      .option("--google-project-number <n>", "its number")
      .option("--azure-tenant-id <id>", "an Azure tenant")
      .option("--description <text>", "what it is for");
  accountOptions(
    aa
      .command("create <name>")
      .description("associate cloud accounts")
      .requiredOption("--parent <group>", "the group"),
  ).action(
    bind(async (ctx, [name]: [string], o: AccountOptions & { parent: string }) => {
      const created = await ctx.client.iam.accountAssociations.createAccountAssociation({
        parent: await groupUid(ctx.client, o.parent),
        accountAssociation: { name, ...association(o) },
      });
      print(ctx, [created], associationView, true);
    }),
  );
  describeVerb(aa, bind, "describe <uid>", "show an account association", associationView, (ctx, uid) =>
    ctx.client.iam.accountAssociations.getAccountAssociation({ uid }),
  );
  accountOptions(aa.command("update <uid>").description("change an account association")).action(
    bind(async (ctx, [uid]: [string], o: AccountOptions) => {
      const updated = await ctx.client.iam.accountAssociations.updateAccountAssociation({
        accountAssociation: { uid, ...association(o) },
        updateMask: mask(o, {
          description: "description",
          amazonAccount: "amazon",
          googleProjectId: "google",
          azureTenantId: "azure",
        }),
      });
      print(ctx, [updated], associationView, true);
    }),
  );
  deleteVerb(aa, bind, "delete <uid>", "delete an account association", "account association", (ctx, uid) =>
    ctx.client.iam.accountAssociations.deleteAccountAssociation({ uid }),
  );
}
