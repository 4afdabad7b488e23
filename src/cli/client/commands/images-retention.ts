import { Code } from "@connectrpc/connect";
import type { Command } from "commander";
import {
  type RetentionPolicy,
  RetentionPolicySchema,
  type RetentionRule,
  RetentionTagSchema,
} from "../../../gen/platform/registry/v2/retention_pb.js";
import type { WharfApiError } from "../../../sdk/errors.js";
import { listAll } from "../../../sdk/pages.js";
import type { CommandContext } from "../context.js";
import { timeCell, UsageError } from "../output.js";
import { type Bind, print } from "../program.js";
import { groupUid, resolveRepo } from "../resolve.js";
import { field, protoView } from "../views.js";

const ruleText = (r: RetentionRule) =>
  [
    r.repoPattern && `repo=${r.repoPattern}`,
    r.tagPattern && `tags=${r.tagPattern}`,
    r.keepLatest > 0 && `latest=${r.keepLatest}`,
    r.keepPushedWithin && `pushed=${r.keepPushedWithin}`,
    r.keepPulledWithin && `pulled=${r.keepPulledWithin}`,
  ]
    .filter(Boolean)
    .join(",");

const policyView = protoView(RetentionPolicySchema, [
  field("UID", "uid"),
  field("DESCRIPTION", "description"),
  { header: "RULES", cell: (p) => p.rules.map(ruleText).join(" | ") },
  { header: "SCHEDULE", cell: (p) => p.schedule || "manual" },
  {
    header: "LAST RUN",
    cell: (p) => (p.lastRun ? `${timeCell(p.lastRun.endTime)} (${p.lastRun.deletedTags} removed)` : ""),
  },
]);

const removalView = protoView(
  RetentionTagSchema,
  [field("REPO", "repo"), field("TAG", "name"), field("DIGEST", "digest"), field("REASON", "reason")],
  (t) => `${t.repo}:${t.name}`,
);

/** A repeatable option's values, each whole (a rule holds commas). */
const repeated = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

const RULE_KEYS = ["repo", "tags", "latest", "pushed", "pulled"] as const;

/**
 * One `--rule` value: comma-separated `key=value` pairs, keys `repo` (repo glob below the
 * policy's parent), `tags` (tag glob), `latest` (keep the N most recently pushed), `pushed` and
 * `pulled` (keep those pushed or pulled within a duration such as 720h).
 */
export function parseRule(text: string): RetentionRule {
  const rule = { repoPattern: "", tagPattern: "", keepLatest: 0, keepPushedWithin: "", keepPulledWithin: "" };
  for (const pair of text.split(",").filter((p) => p !== "")) {
    const eq = pair.indexOf("=");
    const key = pair.slice(0, eq) as (typeof RULE_KEYS)[number];
    const value = pair.slice(eq + 1);
    if (eq <= 0 || !RULE_KEYS.includes(key)) {
      throw new UsageError(`--rule "${text}": expected key=value pairs with keys ${RULE_KEYS.join(", ")}`);
    }
    if (key === "repo") rule.repoPattern = value;
    else if (key === "tags") rule.tagPattern = value;
    else if (key === "pushed") rule.keepPushedWithin = value;
    else if (key === "pulled") rule.keepPulledWithin = value;
    else {
      if (!/^\d+$/.test(value)) throw new UsageError(`--rule "${text}": latest must be a whole number`);
      rule.keepLatest = Number(value);
    }
  }
  return rule as RetentionRule;
}

/** The uid of the organization, folder or repo `ref` names (a uid, ORG[/FOLDER…] or ORG/…/REPO). */
async function scopeUid(ctx: CommandContext, ref: string): Promise<string> {
  try {
    return await groupUid(ctx.client, ref);
  } catch (err) {
    if ((err as WharfApiError).code !== Code.NotFound) throw err;
    return (await resolveRepo(ctx.client, ref)).uid;
  }
}

interface PolicyOptions {
  rule?: string[];
  schedule?: string;
  description?: string;
}

/** `wharf images retention …`: retention policies, their previews and runs (registered from images.ts). */
export function registerRetention(images: Command, bind: Bind): void {
  const retention = images
    .command("retention")
    .description("retention policies: which tags to keep under an organization, folder or repo");
  const ruleHelp = "a rule, repeatable: key=value pairs repo=GLOB,tags=GLOB,latest=N,pushed=720h,pulled=720h";
  retention
    .command("create <scope>")
    .description(
      "create a policy under ORG, ORG/FOLDER or ORG/REPO (or a uid); a tag is kept if any rule keeps it",
    )
    .option("--rule <rule>", ruleHelp, repeated)
    .option("--schedule <interval>", 'run every interval (e.g. 24h; default: only by "run")')
    .option("--description <text>", "what it is for")
    .action(
      bind(async (ctx, [ref]: [string], o: PolicyOptions) => {
        if (!o.rule?.length) throw new UsageError("give at least one --rule");
        const policy = await ctx.client.registry.retentionPolicies.createRetentionPolicy({
          parent: await scopeUid(ctx, ref),
          retentionPolicy: {
            rules: o.rule.map(parseRule),
            schedule: o.schedule ?? "",
            description: o.description ?? "",
          },
        });
        print(ctx, [policy], policyView, true);
      }),
    );
  retention
    .command("list")
    .description("list retention policies")
    .option("--parent <scope>", "only those at or below this organization, folder or repo")
    .action(
      bind(async (ctx, _args, o: { parent?: string }) => {
        const uidp = o.parent === undefined ? undefined : { descendantsOf: await scopeUid(ctx, o.parent) };
        const all: RetentionPolicy[] = [];
        for await (const p of listAll(ctx.client.registry.retentionPolicies.listRetentionPolicies, {
          ...(uidp ? { uidp } : {}),
        })) {
          all.push(p);
        }
        print(ctx, all, policyView);
      }),
    );
  retention
    .command("describe <uid>")
    .description("show a policy")
    .action(
      bind(async (ctx, [uid]: [string]) =>
        print(
          ctx,
          [await ctx.client.registry.retentionPolicies.getRetentionPolicy({ uid })],
          policyView,
          true,
        ),
      ),
    );
  retention
    .command("update <uid>")
    .description('change a policy\'s rules (all replaced), schedule ("" for manual) or description')
    .option("--rule <rule>", ruleHelp, repeated)
    .option("--schedule <interval>", 'run every interval, or "" for manual runs only')
    .option("--description <text>", "what it is for")
    .action(
      bind(async (ctx, [uid]: [string], o: PolicyOptions) => {
        const paths = [
          ...(o.rule?.length ? ["rules"] : []),
          ...(o.schedule !== undefined ? ["schedule"] : []),
          ...(o.description !== undefined ? ["description"] : []),
        ];
        if (paths.length === 0)
          throw new UsageError("nothing to change: give --rule, --schedule or --description");
        const policy = await ctx.client.registry.retentionPolicies.updateRetentionPolicy({
          retentionPolicy: {
            uid,
            rules: (o.rule ?? []).map(parseRule),
            schedule: o.schedule ?? "",
            description: o.description ?? "",
          },
          updateMask: { paths },
        });
        print(ctx, [policy], policyView, true);
      }),
    );
  retention
    .command("delete <uid>")
    .description("delete a policy (its tags stay)")
    .action(
      bind(async (ctx, [uid]: [string]) => {
        await ctx.client.registry.retentionPolicies.deleteRetentionPolicy({ uid });
        ctx.stderr.write(`deleted retention policy ${uid}\n`);
      }),
    );
  retention
    .command("preview <uid>")
    .description("the tags a run would remove now, and why; changes nothing")
    .action(
      bind(async (ctx, [uid]: [string]) => {
        const { tags } = await ctx.client.registry.retentionPolicies.previewRetentionPolicy({ uid });
        print(ctx, tags, removalView);
      }),
    );
  retention
    .command("run <uid>")
    .description("run the policy now: remove the tags no rule keeps (each as `images tags delete` would)")
    .action(
      bind(async (ctx, [uid]: [string]) => {
        const run = await ctx.client.registry.retentionPolicies.runRetentionPolicy({ uid });
        print(ctx, run.tags, removalView);
        ctx.stderr.write(`run ${run.uid}: removed ${run.deletedTags} tags\n`);
      }),
    );
}
