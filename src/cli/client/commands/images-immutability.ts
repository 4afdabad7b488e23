import { Code } from "@connectrpc/connect";
import type { Command } from "commander";
import { ImmutabilityRuleSchema } from "../../../gen/platform/registry/v2/immutability_pb.js";
import { WharfApiError } from "../../../sdk/errors.js";
import { listAll } from "../../../sdk/pages.js";
import type { CommandContext } from "../context.js";
import { timeCell, UsageError } from "../output.js";
import { type Bind, collect, print } from "../program.js";
import { isUid, resolveGroup, resolveRepo } from "../resolve.js";
import { field, protoView } from "../views.js";

const ruleView = protoView(ImmutabilityRuleSchema, [
  field("UID", "uid"),
  { header: "PATTERNS", cell: (r) => r.tagPatterns.join(" ") },
  field("DESCRIPTION", "description"),
  { header: "UPDATED", cell: (r) => timeCell(r.updateTime) },
]);

/**
 * The uid of the organization, folder or repo `ref` names: a uid as is; else a group by its path
 * (`acme`, `acme/prod`), failing that a repo (`acme/app`).
 */
async function parentUid(ctx: CommandContext, ref: string): Promise<string> {
  if (isUid(ref)) return ref;
  try {
    return (await resolveGroup(ctx.client, ref)).uid;
  } catch (err) {
    if (!(err instanceof WharfApiError && err.code === Code.NotFound) || !ref.includes("/")) throw err;
  }
  return (await resolveRepo(ctx.client, ref)).uid;
}

function requireRuleUid(uid: string): string {
  if (!isUid(uid) || !uid.includes("/")) throw new UsageError(`"${uid}" is not a rule uid`);
  return uid;
}

/**
 * `wharf images immutability create|list|describe|update|delete`: the immutability rules of
 * organizations, folders and repos (ImmutabilityRulesService), on the `bind` of `wharf images`.
 */
export function registerImmutability(images: Command, bind: Bind): void {
  const rules = images
    .command("immutability")
    .description("immutability rules: tags matching them never move and are never deleted");
  rules
    .command("create <parent>")
    .description("create a rule at an organization, folder or repo (ORG[/FOLDER…] or ORG/REPO, or a uid)")
    .requiredOption("--pattern <glob>", "a tag glob: * ? […]; a leading ! excludes (repeatable)", collect)
    .option("--description <text>", "why the tags are immutable")
    .action(
      bind(async (ctx, [parent]: [string], o: { pattern: string[]; description?: string }) => {
        const rule = await ctx.client.registry.immutabilityRules.createImmutabilityRule({
          parent: await parentUid(ctx, parent),
          immutabilityRule: { tagPatterns: o.pattern, description: o.description ?? "" },
        });
        print(ctx, [rule], ruleView, true);
      }),
    );
  rules
    .command("list")
    .description("list rules (with --parent, those at it and below)")
    .option("--parent <parent>", "an organization, folder or repo")
    .action(
      bind(async (ctx, _args, o: { parent?: string }) => {
        const uidp = o.parent === undefined ? undefined : { descendantsOf: await parentUid(ctx, o.parent) };
        const request = { ...(uidp ? { uidp } : {}), orderBy: "create_time" };
        const out = [];
        for await (const rule of listAll(
          ctx.client.registry.immutabilityRules.listImmutabilityRules,
          request,
        )) {
          out.push(rule);
        }
        print(ctx, out, ruleView);
      }),
    );
  rules
    .command("describe <uid>")
    .description("show a rule")
    .action(
      bind(async (ctx, [uid]: [string]) => {
        const rule = await ctx.client.registry.immutabilityRules.getImmutabilityRule({
          uid: requireRuleUid(uid),
        });
        print(ctx, [rule], ruleView, true);
      }),
    );
  rules
    .command("update <uid>")
    .description("replace a rule's patterns or description")
    .option("--pattern <glob>", "the new patterns, replacing all (repeatable)", collect)
    .option("--description <text>", "the new description")
    .action(
      bind(async (ctx, [uid]: [string], o: { pattern?: string[]; description?: string }) => {
        const paths = [
          ...(o.pattern === undefined ? [] : ["tag_patterns"]),
          ...(o.description === undefined ? [] : ["description"]),
        ];
        if (paths.length === 0) throw new UsageError("give --pattern or --description");
        const rule = await ctx.client.registry.immutabilityRules.updateImmutabilityRule({
          immutabilityRule: {
            uid: requireRuleUid(uid),
            tagPatterns: o.pattern ?? [],
            description: o.description ?? "",
          },
          updateMask: { paths },
        });
        print(ctx, [rule], ruleView, true);
      }),
    );
  rules
    .command("delete <uid>")
    .description("delete a rule")
    .action(
      bind(async (ctx, [uid]: [string]) => {
        await ctx.client.registry.immutabilityRules.deleteImmutabilityRule({ uid: requireRuleUid(uid) });
        ctx.stderr.write(`deleted immutability rule ${uid}\n`);
      }),
    );
}
