// `wharf iam terms …`: legal documents an organization accepted.
import type { Command } from "commander";
import { TermsAcceptanceSchema } from "../../../../gen/platform/iam/v2/terms_pb.js";
import { listAll } from "../../../../sdk/pages.js";
import { timeCell } from "../../output.js";
import { type Bind, print } from "../../program.js";
import { groupUid } from "../../resolve.js";
import { field, protoView } from "../../views.js";
import { collectAll } from "./shared.js";

const termsView = protoView(
  TermsAcceptanceSchema,
  [
    field("DOCUMENT", "docId"),
    field("ACCEPTED BY", "acceptedBy"),
    field("ORGANIZATION", "orgUid"),
    { header: "TIME", cell: (t) => timeCell(t.createTime) },
  ],
  (t) => t.docId,
);

type ParentOption = { parent: string };

export function registerTerms(iam: Command, bind: Bind): void {
  const terms = iam.command("terms").description("legal documents an organization accepted");
  terms
    .command("accept <documents...>")
    .description("accept documents for an organization")
    .requiredOption("--parent <org>", "the organization")
    .action(
      bind(async (ctx, documentIds, o: ParentOption) => {
        const group = await groupUid(ctx.client, o.parent);
        const accepted = await ctx.client.iam.terms.acceptTerms({ group, documentIds });
        ctx.stderr.write(`accepted ${accepted.documentIds.join(", ")} for ${accepted.group}\n`);
      }),
    );
  terms
    .command("list")
    .description("list accepted documents")
    .requiredOption("--parent <org>", "the organization")
    .action(
      bind(async (ctx, _args, o: ParentOption) => {
        const group = await groupUid(ctx.client, o.parent);
        print(
          ctx,
          await collectAll(listAll(ctx.client.iam.terms.listTermsAcceptances, { group })),
          termsView,
        );
      }),
    );
}
