import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Command } from "commander";
import { GroupsService } from "../../../gen/platform/iam/v2/groups_pb.js";
import {
  type ReplicationRule,
  ReplicationRule_Direction,
  ReplicationRule_Trigger,
  ReplicationRuleSchema,
  ReplicationRulesService,
  type ReplicationRun,
  ReplicationRun_State,
  ReplicationRunSchema,
  ReplicationRunsService,
} from "../../../gen/platform/registry/v2/replication_pb.js";
import { listAll } from "../../../sdk/pages.js";
import type { CommandContext } from "../context.js";
import { CommandExit, EXIT } from "../exit-codes.js";
import { timeCell, UsageError } from "../output.js";
import { type BindFor, print, subcommand } from "../program.js";
import { isTerminal, lineTicker, terminalBar } from "../progress.js";
import { groupUid, isUid } from "../resolve.js";
import { CLIENT_GROUPS } from "../routing.js";
import { field, protoView } from "../views.js";

/** The services `wharf replication` calls (only these load: see leanClient). */
const SERVICES = {
  iam: { groups: GroupsService },
  registry: { replicationRules: ReplicationRulesService, replicationRuns: ReplicationRunsService },
};

const ruleView = protoView(ReplicationRuleSchema, [
  field("UID", "uid"),
  field("NAME", "name"),
  { header: "DIRECTION", cell: (r) => ReplicationRule_Direction[r.direction] },
  { header: "REMOTE", cell: (r) => r.remote?.url ?? "" },
  { header: "REPOS", cell: (r) => r.repoPattern },
  { header: "TAGS", cell: (r) => r.tagPattern || "*" },
  { header: "DESTINATION", cell: (r) => r.destination },
  {
    header: "TRIGGER",
    cell: (r) =>
      `${ReplicationRule_Trigger[r.trigger]}${r.interval ? ` ${r.interval}` : ""}${r.enabled ? "" : " (disabled)"}`,
  },
]);

const mib = (bytes: bigint) => `${(Number(bytes) / 1048576).toFixed(1)} MiB`;

const runView = protoView(ReplicationRunSchema, [
  field("UID", "uid"),
  { header: "STATE", cell: (r) => ReplicationRun_State[r.state] },
  { header: "TRIGGER", cell: (r) => ReplicationRule_Trigger[r.trigger] },
  { header: "STARTED", cell: (r) => timeCell(r.startTime) },
  { header: "ENDED", cell: (r) => timeCell(r.endTime) },
  { header: "MANIFESTS", cell: (r) => String(r.copiedManifests) },
  { header: "BLOBS", cell: (r) => `${r.copiedBlobs} (+${r.skippedBlobs} skipped)` },
  { header: "BYTES", cell: (r) => mib(r.copiedBytes) },
  { header: "ERRORS", cell: (r) => String(BigInt(r.errors.length) + r.errorsOmitted) },
]);

/** How often `run --wait` looks at the run. */
const WAIT_POLL_MS = 500;

/** The uid of the rule `ref` names: a uid, or ORG/NAME. */
async function ruleUid(ctx: CommandContext, ref: string): Promise<string> {
  if (isUid(ref)) return ref;
  const slash = ref.lastIndexOf("/");
  if (slash <= 0) throw new UsageError(`"${ref}" is neither a rule uid nor ORG/NAME`);
  const org = await groupUid(ctx.client, ref.slice(0, slash));
  const name = ref.slice(slash + 1);
  for await (const rule of listAll(ctx.client.registry.replicationRules.listReplicationRules, {
    uidp: { descendantsOf: org },
  })) {
    if (rule.name === name) return rule.uid;
  }
  throw new UsageError(`no replication rule named "${name}" in ${ref.slice(0, slash)}`);
}

function enumValue<E extends Record<string, string | number>>(e: E, flag: string, value: string): E[keyof E] {
  const key = value.toUpperCase().replace(/-/g, "_");
  const found = e[key as keyof E];
  if (typeof found !== "number" || found === 0) {
    const names = Object.keys(e).filter((k) => Number.isNaN(Number(k)) && !k.endsWith("UNSPECIFIED"));
    throw new UsageError(`${flag} takes ${names.join(", ")} (got "${value}")`);
  }
  return found as E[keyof E];
}

async function readPassword(): Promise<string> {
  let text = "";
  for await (const chunk of process.stdin) text += String(chunk);
  return text.replace(/\r?\n$/, "");
}

interface RuleOptions {
  direction?: string;
  remote?: string;
  username?: string;
  passwordStdin?: boolean;
  repos?: string;
  tags?: string;
  destination?: string;
  trigger?: string;
  interval?: string;
  enabled?: boolean;
  name?: string;
}

/** The rule fields the options set, and their update-mask paths. */
async function ruleFields(
  o: RuleOptions,
): Promise<{ rule: MessageInitShape<typeof ReplicationRuleSchema>; paths: string[] }> {
  const rule: Record<string, unknown> = {};
  const paths: string[] = [];
  const remote: Record<string, string> = {};
  const set = (path: string, key: string, value: unknown) => {
    rule[key] = value;
    paths.push(path);
  };
  if (o.name !== undefined) set("name", "name", o.name);
  if (o.direction !== undefined)
    set("direction", "direction", enumValue(ReplicationRule_Direction, "--direction", o.direction));
  if (o.trigger !== undefined)
    set("trigger", "trigger", enumValue(ReplicationRule_Trigger, "--trigger", o.trigger));
  if (o.interval !== undefined) set("interval", "interval", o.interval);
  if (o.repos !== undefined) set("repo_pattern", "repoPattern", o.repos);
  if (o.tags !== undefined) set("tag_pattern", "tagPattern", o.tags);
  if (o.destination !== undefined) set("destination", "destination", o.destination);
  if (o.enabled !== undefined) set("enabled", "enabled", o.enabled);
  if (o.remote !== undefined) {
    remote.url = o.remote;
    paths.push("remote.url");
  }
  if (o.username !== undefined) {
    remote.username = o.username;
    paths.push("remote.username");
  }
  if (o.passwordStdin) {
    remote.password = await readPassword();
    paths.push("remote.password");
  }
  if (Object.keys(remote).length > 0) rule.remote = remote;
  return { rule: rule as MessageInitShape<typeof ReplicationRuleSchema>, paths };
}

const ruleOptions = (command: Command) =>
  command
    .option("--remote <url>", "the other registry: https://host[:port][/prefix]")
    .option("--username <name>", "the remote's user (default: anonymous)")
    .option("--password-stdin", "read the remote's password from stdin (never shown again)")
    .option(
      "--repos <glob>",
      "PUSH: repos below the organization (default **); PULL: the remote repo path or glob",
    )
    .option("--tags <glob>", "tags to copy (default: every tag)")
    .option("--destination <path>", "path prefix on the other side (default none)")
    .option("--trigger <trigger>", "ON_PUSH (PUSH only), INTERVAL or MANUAL")
    .option("--interval <duration>", "for INTERVAL: run this often (at least 1m)");

/** Ends of a run. */
const ENDED = new Set([ReplicationRun_State.SUCCEEDED, ReplicationRun_State.FAILED]);

/**
 * Follows a run until it ends: a bar of bytes and blobs with the state on a terminal, a plain line
 * per change elsewhere; prints the run; exits 1 when it FAILED (its errors listed on stderr).
 */
async function waitForRun(ctx: CommandContext, first: ReplicationRun): Promise<void> {
  const label = "wharf replication run";
  const bar = isTerminal(ctx.stderr) ? terminalBar(ctx.stderr, label) : undefined;
  const ticker = lineTicker();
  const deadline = ctx.timeoutMs === undefined ? undefined : Date.now() + ctx.timeoutMs;
  let run = first;
  let shown = "";
  try {
    for (;;) {
      const status = `${ReplicationRun_State[run.state]}: ${mib(run.copiedBytes)}, ${run.copiedBlobs} blobs sent, ${run.skippedBlobs} skipped, ${run.copiedManifests} manifests`;
      if (bar)
        bar.show({ head: ReplicationRun_State[run.state], tail: status.slice(status.indexOf(":") + 2) });
      else if (status !== shown || ticker.due()) {
        ctx.stderr.write(`${label}: ${status}\n`);
        ticker.reset();
        shown = status;
      }
      if (ENDED.has(run.state)) break;
      if (deadline !== undefined && Date.now() >= deadline) {
        bar?.stop();
        ctx.stderr.write(`wharf: timed out; run ${run.uid} is ${ReplicationRun_State[run.state]}\n`);
        throw new CommandExit(EXIT.error);
      }
      await new Promise((r) => setTimeout(r, WAIT_POLL_MS));
      run = await ctx.client.registry.replicationRuns.getReplicationRun({ uid: run.uid });
    }
  } finally {
    bar?.stop();
  }
  print(ctx, [run], runView, true);
  if (run.state === ReplicationRun_State.FAILED) {
    for (const e of run.errors) ctx.stderr.write(`  ${e.reference}: ${e.message}\n`);
    if (run.errorsOmitted > 0n) ctx.stderr.write(`  … and ${run.errorsOmitted} more\n`);
    throw new CommandExit(EXIT.error);
  }
}

/** `wharf replication …`: replication rules and their runs (ADR 0054). */
export function registerReplication(program: Command, bindFor: BindFor): void {
  const bind = bindFor(SERVICES);
  const replication = subcommand(program, "replication", CLIENT_GROUPS.replication);

  ruleOptions(
    replication
      .command("create <org> <name>")
      .description(
        "create a rule in an organization (name or uid): copy its repos to a remote (PUSH) or a remote's into it (PULL)",
      )
      .option("--direction <direction>", "PUSH or PULL", "PUSH"),
  )
    .option("--disabled", "create it disabled (no ON_PUSH or INTERVAL runs)")
    .action(
      bind(async (ctx, [org, name]: [string, string], o: RuleOptions & { disabled?: boolean }) => {
        if (o.remote === undefined) throw new UsageError("--remote is required");
        const { rule } = await ruleFields({ ...o, name, trigger: o.trigger ?? "MANUAL" });
        const created = await ctx.client.registry.replicationRules.createReplicationRule({
          parent: await groupUid(ctx.client, org),
          replicationRule: { ...rule, enabled: !o.disabled },
        });
        print(ctx, [created], ruleView, true);
      }),
    );

  replication
    .command("list")
    .description("list replication rules")
    .option("--org <org>", "only this organization's")
    .action(
      bind(async (ctx, _args, o: { org?: string }) => {
        const uidp = o.org === undefined ? undefined : { descendantsOf: await groupUid(ctx.client, o.org) };
        const all: ReplicationRule[] = [];
        for await (const r of listAll(ctx.client.registry.replicationRules.listReplicationRules, {
          ...(uidp ? { uidp } : {}),
        })) {
          all.push(r);
        }
        print(ctx, all, ruleView);
      }),
    );

  replication
    .command("get <rule>")
    .description("show a rule (uid or ORG/NAME)")
    .action(
      bind(async (ctx, [ref]: [string]) =>
        print(
          ctx,
          [await ctx.client.registry.replicationRules.getReplicationRule({ uid: await ruleUid(ctx, ref) })],
          ruleView,
          true,
        ),
      ),
    );

  ruleOptions(
    replication
      .command("update <rule>")
      .description("change a rule (uid or ORG/NAME): only the options given")
      .option("--name <name>", "rename it")
      .option("--direction <direction>", "PUSH or PULL"),
  )
    .option("--enable", "enable it")
    .option("--disable", "disable it")
    .action(
      bind(async (ctx, [ref]: [string], o: RuleOptions & { enable?: boolean; disable?: boolean }) => {
        if (o.enable && o.disable) throw new UsageError("give --enable or --disable, not both");
        const enabled = o.enable ? true : o.disable ? false : undefined;
        const { rule, paths } = await ruleFields({ ...o, ...(enabled === undefined ? {} : { enabled }) });
        if (paths.length === 0) throw new UsageError("nothing to change: give at least one option");
        const uid = await ruleUid(ctx, ref);
        const updated = await ctx.client.registry.replicationRules.updateReplicationRule({
          replicationRule: { ...rule, uid },
          updateMask: { paths },
        });
        print(ctx, [updated], ruleView, true);
      }),
    );

  replication
    .command("delete <rule>")
    .description("delete a rule (uid or ORG/NAME) and its runs")
    .action(
      bind(async (ctx, [ref]: [string]) => {
        const uid = await ruleUid(ctx, ref);
        await ctx.client.registry.replicationRules.deleteReplicationRule({ uid });
        ctx.stderr.write(`deleted ${uid}\n`);
      }),
    );

  replication
    .command("run <rule>")
    .description(
      "run a rule now (uid or ORG/NAME); with --wait, follow it (bytes, blobs, state) and exit 1 if it FAILED",
    )
    .option("--wait", "wait for the run to end")
    .action(
      bind(async (ctx, [ref]: [string], o: { wait?: boolean }) => {
        const run = await ctx.client.registry.replicationRules.runReplicationRule({
          uid: await ruleUid(ctx, ref),
        });
        if (o.wait) await waitForRun(ctx, run);
        else print(ctx, [run], runView, true);
      }),
    );

  replication
    .command("runs")
    .description("list runs, newest first")
    .option("--rule <rule>", "only this rule's (uid or ORG/NAME)")
    .option("--limit <n>", "at most this many", "50")
    .action(
      bind(async (ctx, _args, o: { rule?: string; limit: string }) => {
        const limit = Number(o.limit);
        if (!Number.isInteger(limit) || limit < 1) throw new UsageError("--limit takes a positive number");
        const rule = o.rule === undefined ? "" : await ruleUid(ctx, o.rule);
        const runs: ReplicationRun[] = [];
        for await (const r of listAll(ctx.client.registry.replicationRuns.listReplicationRuns, { rule })) {
          runs.push(r);
          if (runs.length >= limit) break;
        }
        print(ctx, runs, runView);
      }),
    );
}
