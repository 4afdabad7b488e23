import { Code } from "@connectrpc/connect";
import type { Command } from "commander";
import { GroupsService } from "../../../gen/platform/iam/v2/groups_pb.js";
import {
  PoliciesService,
  type Policy,
  Policy_Mode,
  Policy_Severity,
  PolicySchema,
  PolicyViolationSchema,
} from "../../../gen/platform/registry/v2/policies_pb.js";
import { ReposService } from "../../../gen/platform/registry/v2/repos_pb.js";
import { TagsService } from "../../../gen/platform/registry/v2/tags_pb.js";
import type { WharfClient } from "../../../sdk/client.js";
import { WharfApiError } from "../../../sdk/errors.js";
import { listAll } from "../../../sdk/pages.js";
import { timeCell, UsageError } from "../output.js";
import { type BindFor, print, subcommand } from "../program.js";
import { isUid, parseImage, resolveGroup, resolveRepo, resolveTag } from "../resolve.js";
import { CLIENT_GROUPS } from "../routing.js";
import { field, protoView } from "../views.js";

const policyView = protoView(PolicySchema, [
  field("UID", "uid"),
  field("NAME", "name"),
  { header: "MODE", cell: (p) => Policy_Mode[p.mode] ?? "" },
  {
    header: "RULES",
    cell: (p) =>
      [
        p.requireSignature ? "requireSignature" : "",
        p.denySeverity !== Policy_Severity.SEVERITY_UNSPECIFIED
          ? `denySeverity=${Policy_Severity[p.denySeverity]}${p.onlyFixable ? " (fixable)" : ""}`
          : "",
        p.denyEol ? "denyEol" : "",
        p.requireSbom ? "requireSbom" : "",
      ]
        .filter(Boolean)
        .join(", "),
  },
  { header: "EXEMPT", cell: (p) => String(p.exemptIdentities.length) },
  { header: "UPDATED", cell: (p) => timeCell(p.updateTime) },
]);

const violationView = protoView(PolicyViolationSchema, [
  field("POLICY", "policy"),
  { header: "MODE", cell: (v) => Policy_Mode[v.mode] ?? "" },
  field("RULE", "rule"),
  field("DETAIL", "detail"),
]);

/** The services `wharf policies` calls (only these load: see leanClient). */
const SERVICES = {
  iam: { groups: GroupsService },
  registry: { policies: PoliciesService, repos: ReposService, tags: TagsService },
};

/** The uid of a policy's parent: a uid, or a path naming an organization, folder or repo. */
async function parentUid(client: WharfClient, ref: string): Promise<string> {
  if (isUid(ref)) return ref;
  try {
    return (await resolveGroup(client, ref)).uid;
  } catch (err) {
    if (!(err instanceof WharfApiError) || err.code !== Code.NotFound) throw err;
    return (await resolveRepo(client, ref)).uid;
  }
}

/** The policy `ref` names: a uid, or `PARENT/NAME` (e.g. `acme/prod/baseline`). */
async function resolvePolicy(client: WharfClient, ref: string): Promise<Policy> {
  if (isUid(ref)) return client.registry.policies.getPolicy({ uid: ref });
  const slash = ref.lastIndexOf("/");
  if (slash <= 0) throw new UsageError(`"${ref}" is neither a policy uid nor PARENT/NAME`);
  const parent = await parentUid(client, ref.slice(0, slash));
  const name = ref.slice(slash + 1);
  for await (const policy of listAll(client.registry.policies.listPolicies, {
    uidp: { childrenOf: parent },
  })) {
    if (policy.name === name) return policy;
  }
  throw new WharfApiError({ code: Code.NotFound, message: `policy "${ref}" not found` });
}

interface RuleOptions {
  name?: string;
  mode?: string;
  requireSignature?: boolean;
  denySeverity?: string;
  onlyFixable?: boolean;
  denyEol?: boolean;
  requireSbom?: boolean;
  exempt?: string[];
}

function modeOf(mode: string): Policy_Mode {
  const value = Policy_Mode[mode.toUpperCase() as keyof typeof Policy_Mode];
  if (value === undefined || value === Policy_Mode.MODE_UNSPECIFIED)
    throw new UsageError(`--mode is ENFORCE or WARN (got "${mode}")`);
  return value;
}

function severityOf(severity: string): Policy_Severity {
  if (severity === "" || severity.toUpperCase() === "OFF") return Policy_Severity.SEVERITY_UNSPECIFIED;
  const value = Policy_Severity[severity.toUpperCase() as keyof typeof Policy_Severity];
  if (value === undefined || value === Policy_Severity.SEVERITY_UNSPECIFIED)
    throw new UsageError(`--deny-severity is LOW, MEDIUM, HIGH, CRITICAL or off (got "${severity}")`);
  return value;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/**
 * `wharf policies create|list|get|update|delete|evaluate`: pull policies under an organization,
 * folder or repo, and what a pull of an image would get (ADR 0058).
 */
export function registerPolicies(program: Command, bindFor: BindFor): void {
  const bind = bindFor(SERVICES);
  const policies = subcommand(program, "policies", CLIENT_GROUPS.policies);
  policies
    .command("create <parent>")
    .description("create a pull policy under an organization, folder or repo (path or uid)")
    .requiredOption("--name <name>", "the policy's name (a-z, 0-9, . _ -)")
    .requiredOption("--mode <mode>", "ENFORCE (refuse pulls) or WARN (serve with a Warning header)")
    .option("--require-signature", "require a signature verified by a trusted signing key")
    .option(
      "--deny-severity <severity>",
      "refuse unsuppressed vulnerabilities at or above LOW|MEDIUM|HIGH|CRITICAL",
    )
    .option("--only-fixable", "with --deny-severity: only vulnerabilities with a fixed version")
    .option("--deny-eol", "refuse tags whose release cycle is past end of life and grace")
    .option("--require-sbom", "require an SPDX or CycloneDX SBOM referrer")
    .option("--exempt <identity uid>", "an identity the policy never applies to (repeatable)", collect)
    .action(
      bind(async (ctx, [parent]: [string], o: RuleOptions) => {
        const policy = await ctx.client.registry.policies.createPolicy({
          parent: await parentUid(ctx.client, parent),
          policy: {
            name: o.name ?? "",
            mode: modeOf(o.mode ?? ""),
            requireSignature: o.requireSignature === true,
            denySeverity: severityOf(o.denySeverity ?? ""),
            onlyFixable: o.onlyFixable === true,
            denyEol: o.denyEol === true,
            requireSbom: o.requireSbom === true,
            exemptIdentities: o.exempt ?? [],
          },
        });
        print(ctx, [policy], policyView, true);
      }),
    );
  policies
    .command("list")
    .description("list pull policies (with --under, those of a group or repo and beneath it)")
    .option("--under <parent>", "an organization, folder or repo (path or uid)")
    .action(
      bind(async (ctx, _args, o: { under?: string }) => {
        const uidp =
          o.under === undefined ? undefined : { descendantsOf: await parentUid(ctx.client, o.under) };
        const out: Policy[] = [];
        for await (const p of listAll(ctx.client.registry.policies.listPolicies, {
          ...(uidp ? { uidp } : {}),
          orderBy: "name",
        })) {
          out.push(p);
        }
        print(ctx, out, policyView);
      }),
    );
  policies
    .command("get <policy>")
    .description("show a policy (PARENT/NAME or its uid)")
    .action(
      bind(async (ctx, [ref]: [string]) => {
        print(ctx, [await resolvePolicy(ctx.client, ref)], policyView, true);
      }),
    );
  policies
    .command("update <policy>")
    .description("change a policy's name, mode, rules or exemptions (PARENT/NAME or its uid)")
    .option("--name <name>", "the new name")
    .option("--mode <mode>", "ENFORCE or WARN")
    .option("--require-signature", "turn requireSignature on")
    .option("--no-require-signature", "turn requireSignature off")
    .option("--deny-severity <severity>", "LOW|MEDIUM|HIGH|CRITICAL, or off")
    .option("--only-fixable", "turn onlyFixable on")
    .option("--no-only-fixable", "turn onlyFixable off")
    .option("--deny-eol", "turn denyEol on")
    .option("--no-deny-eol", "turn denyEol off")
    .option("--require-sbom", "turn requireSbom on")
    .option("--no-require-sbom", "turn requireSbom off")
    .option("--exempt <identity uid>", "replace the exempt identities (repeatable)", collect)
    .option("--clear-exempt", "remove every exempt identity")
    .action(
      bind(async (ctx, [ref]: [string], o: RuleOptions & { clearExempt?: boolean }) => {
        const paths = [
          ...(o.name === undefined ? [] : ["name"]),
          ...(o.mode === undefined ? [] : ["mode"]),
          ...(o.requireSignature === undefined ? [] : ["require_signature"]),
          ...(o.denySeverity === undefined ? [] : ["deny_severity"]),
          ...(o.onlyFixable === undefined ? [] : ["only_fixable"]),
          ...(o.denyEol === undefined ? [] : ["deny_eol"]),
          ...(o.requireSbom === undefined ? [] : ["require_sbom"]),
          ...(o.exempt === undefined && !o.clearExempt ? [] : ["exempt_identities"]),
        ];
        if (paths.length === 0) throw new UsageError("give at least one field to change");
        const current = await resolvePolicy(ctx.client, ref);
        const policy = await ctx.client.registry.policies.updatePolicy({
          policy: {
            uid: current.uid,
            name: o.name ?? "",
            mode: o.mode === undefined ? Policy_Mode.MODE_UNSPECIFIED : modeOf(o.mode),
            requireSignature: o.requireSignature === true,
            denySeverity: severityOf(o.denySeverity ?? ""),
            onlyFixable: o.onlyFixable === true,
            denyEol: o.denyEol === true,
            requireSbom: o.requireSbom === true,
            exemptIdentities: o.clearExempt ? [] : (o.exempt ?? []),
          },
          updateMask: { paths },
        });
        print(ctx, [policy], policyView, true);
      }),
    );
  policies
    .command("delete <policy>")
    .description("delete a policy (PARENT/NAME or its uid)")
    .action(
      bind(async (ctx, [ref]: [string]) => {
        const { uid } = await resolvePolicy(ctx.client, ref);
        await ctx.client.registry.policies.deletePolicy({ uid });
        ctx.stderr.write(`deleted policy ${ref}\n`);
      }),
    );
  policies
    .command("evaluate <image>")
    .description(
      "what a pull of ORG/REPO[:TAG|@DIGEST] would get now (exemptions ignored): allowed, and each failed rule",
    )
    .action(
      bind(async (ctx, [ref]: [string]) => {
        const image = parseImage(ref);
        const repo = await resolveRepo(ctx.client, image.repository);
        const tag = image.digest === undefined ? (image.tag ?? "latest") : "";
        const digest = image.digest ?? (await resolveTag(ctx.client, repo.uid, tag)).digest;
        const decision = await ctx.client.registry.policies.evaluatePolicies({
          repoUid: repo.uid,
          digest,
          tag,
        });
        if (ctx.format !== "table") {
          ctx.stdout.write(
            `${JSON.stringify({
              allowed: decision.allowed,
              violations: decision.violations.map((v) => ({
                policy: v.policy,
                mode: Policy_Mode[v.mode],
                rule: v.rule,
                detail: v.detail,
              })),
              warnings: decision.warnings,
            })}\n`,
          );
          return;
        }
        ctx.stdout.write(`${decision.allowed ? "allowed" : "denied"}: ${image.repository}@${digest}\n`);
        if (decision.violations.length > 0) print(ctx, decision.violations, violationView);
      }),
    );
}
