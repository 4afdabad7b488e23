import { create, toJson } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import type { Command } from "commander";
import { GroupsService } from "../../../gen/platform/iam/v2/groups_pb.js";
import {
  Fix_State,
  Registry,
  type VulnerabilityMatch,
  type VulnReport,
  VulnReportSchema,
} from "../../../gen/platform/registry/v1/registry_pb.js";
import { Vex } from "../../../gen/platform/registry/v1/vex_pb.js";
import { ReposService } from "../../../gen/platform/registry/v2/repos_pb.js";
import { WharfApiError } from "../../../sdk/errors.js";
import type { CommandContext } from "../context.js";
import { render, timeCell, type View } from "../output.js";
import { type BindFor, print, subcommand } from "../program.js";
import { parseImage, resolveRepo } from "../resolve.js";
import { CLIENT_GROUPS } from "../routing.js";
import {
  filterMatches,
  type MatchFilter,
  parseMinimumSeverity,
  type SeverityCount,
  severityName,
  summarize,
} from "../vuln-summary.js";
import { registerVulnsVex } from "./vulns-vex.js";

const FIX_STATES: Record<Fix_State, string> = {
  [Fix_State.UNKNOWN]: "unknown",
  [Fix_State.FIXED]: "fixed",
  [Fix_State.NOT_FIXED]: "not fixed",
  [Fix_State.WONT_FIX]: "won't fix",
};

const matchView: View<VulnerabilityMatch> = {
  columns: [
    { header: "ID", cell: (m) => m.vulnerability?.displayId || m.vulnerability?.id || "" },
    { header: "SEVERITY", cell: (m) => severityName(m.vulnerability?.severity ?? 0) },
    { header: "PACKAGE", cell: (m) => m.pkg?.name ?? "" },
    { header: "INSTALLED", cell: (m) => m.pkg?.version ?? "" },
    { header: "FIXED IN", cell: (m) => (m.fix?.versions ?? []).join(", ") },
    { header: "STATE", cell: (m) => FIX_STATES[m.fix?.state ?? Fix_State.UNKNOWN] ?? "unknown" },
    { header: "VEX", cell: vexCell },
  ],
  id: (m) => m.vulnerability?.id ?? "",
};

/** A match's VEX verdict: `suppressed (<justification or status>)`, a non-suppressing status, or "". */
function vexCell(m: VulnerabilityMatch): string {
  if (!m.vex) return "";
  if (m.suppressed) return `suppressed (${m.vex.justification || m.vex.status})`;
  return m.vex.status;
}

const summaryView: View<SeverityCount> = {
  columns: [
    { header: "SEVERITY", cell: (c) => c.severity },
    { header: "MATCHES", cell: (c) => String(c.matches) },
    { header: "FIXABLE", cell: (c) => String(c.fixable) },
  ],
};

/** The services `wharf vulns` calls (only these load: see leanClient). */
const SERVICES = {
  iam: { groups: GroupsService },
  registry: { repos: ReposService },
  registryV1: { registry: Registry, vex: Vex },
};

/** `wharf vulns …`: the vulnerability report of an image. */
export function registerVulns(program: Command, bindFor: BindFor): void {
  const bind = bindFor(SERVICES);
  const vulns = subcommand(program, "vulns", CLIENT_GROUPS.vulns);
  vulns
    .command("report <image>")
    .description(
      "the current vulnerability report of an image (ORG/REPO[:TAG|@DIGEST], default tag latest): " +
        "a summary by severity, then its matches; -o json|yaml prints the report (its matches filtered)",
    )
    .option(
      "--severity <level>",
      "a MINIMUM severity: critical, high, medium, low or unknown (high shows high and critical)",
    )
    .option("--fixable", "only matches with a fixed version")
    .action(
      bind(async (ctx, [ref], o) => {
        const filter: MatchFilter = {
          minimumSeverity: typeof o.severity === "string" ? parseMinimumSeverity(o.severity) : undefined,
          fixable: o.fixable === true,
        };
        const report = await imageReport(ctx, ref as string);
        printReport(ctx, report, filterMatches(report.vulnerabilityMatches, filter));
      }),
    );
  registerVulnsVex(vulns, bind);
}

/**
 * The current report of the image `ref` names (a tag resolved to its digest first). NOT_FOUND
 * names the image when it has no report.
 */
async function imageReport(ctx: CommandContext, ref: string): Promise<VulnReport> {
  const image = parseImage(ref);
  const repo = await resolveRepo(ctx.client, image.repository);
  const digest = image.digest ?? (await ctx.client.resolve(`${image.repository}:${image.tag ?? "latest"}`));
  try {
    return await ctx.client.registryV1.registry.getVulnReport({ repoUid: repo.uid, digest });
  } catch (err) {
    if (err instanceof WharfApiError && err.code === Code.NotFound)
      throw new WharfApiError({
        code: Code.NotFound,
        message: `${image.repository}@${digest} has no vulnerability report`,
      });
    throw err;
  }
}

/**
 * Prints a report: as a table the summary of the matches VEX does not suppress (by severity, with
 * fixable counts) and how many it does, then the `shown` matches (suppressed ones marked in VEX); as JSON/YAML the report with `shown` as its matches; `-o id` the ids shown.
 */
function printReport(ctx: CommandContext, report: VulnReport, shown: VulnerabilityMatch[]): void {
  if (ctx.format === "json" || ctx.format === "yaml") {
    const filtered = create(VulnReportSchema, { ...report, vulnerabilityMatches: shown });
    const view: View<VulnReport> = { columns: [], json: (r) => toJson(VulnReportSchema, r) };
    print(ctx, [filtered], view, true);
    return;
  }
  if (ctx.format === "id") {
    print(ctx, shown, matchView);
    return;
  }
  const scanner = report.scanner ? `${report.scanner.name} ${report.scanner.version}`.trim() : "";
  ctx.stdout.write(
    `report ${report.id} (${scanner}, stored ${timeCell(report.lastSeen)}, database built ${timeCell(report.vulnerabilityDbLastBuildTime)})\n`,
  );
  const open = report.vulnerabilityMatches.filter((m) => !m.suppressed);
  ctx.stdout.write(render(summarize(open), summaryView, "table", { color: ctx.color }));
  const suppressed = report.vulnerabilityMatches.length - open.length;
  if (suppressed > 0) ctx.stdout.write(`${suppressed} matches suppressed by VEX (not counted above)\n`);
  ctx.stdout.write(`${shown.length} of ${report.vulnerabilityMatches.length} matches shown\n`);
  if (shown.length > 0) ctx.stdout.write(render(shown, matchView, "table", { color: ctx.color }));
}
