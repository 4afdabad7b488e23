import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import type { Command } from "commander";
import {
  type Advisory,
  AdvisorySchema,
  EventTypeFilter,
  type ListAdvisoriesRequestSchema,
} from "../../../gen/platform/vulnerabilities/v2/advisories_pb.js";
import { WharfApiError } from "../../../sdk/errors.js";
import { listAll } from "../../../sdk/pages.js";
import { VULNERABILITIES_SERVICES } from "../../../sdk/services/vulnerabilities.js";
import type { CommandContext } from "../context.js";
import { timeCell, UsageError } from "../output.js";
import { type BindFor, collect, print, subcommand } from "../program.js";
import { CLIENT_GROUPS } from "../routing.js";
import { field, protoView } from "../views.js";

/** The event types of `--latest-event`, as the CLI writes them. */
const EVENT_TYPES: Record<string, EventTypeFilter> = {
  detection: EventTypeFilter.DETECTION,
  "true-positive-determination": EventTypeFilter.TRUE_POSITIVE_DETERMINATION,
  fixed: EventTypeFilter.FIXED,
  "false-positive-determination": EventTypeFilter.FALSE_POSITIVE_DETERMINATION,
  "analysis-not-planned": EventTypeFilter.ANALYSIS_NOT_PLANNED,
  "fix-not-planned": EventTypeFilter.FIX_NOT_PLANNED,
  "pending-upstream-fix": EventTypeFilter.PENDING_UPSTREAM_FIX,
  patched: EventTypeFilter.PATCHED,
};

/** The CLI name of an event's type (the oneof case in kebab case), "" when it has none. */
function eventTypeName(advisory: Advisory): string {
  const latest = advisory.events.at(-1)?.event.case;
  return latest ? latest.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`) : "";
}

const advisoryView = protoView(AdvisorySchema, [
  field("UID", "uid"),
  field("ADVISORY", "advisoryId"),
  field("ARTIFACT", "artifactName"),
  field("COMPONENT", "componentName"),
  { header: "ALIASES", cell: (a) => a.aliases.join(", ") },
  { header: "LATEST EVENT", cell: eventTypeName },
  { header: "UPDATED", cell: (a) => timeCell(a.updateTime) },
]);

/** Parses a positive whole number flag; usage error otherwise. */
function positiveInt(flag: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0)
    throw new UsageError(`--${flag} must be a positive whole number (got "${value}")`);
  return n;
}

type ListRequest = MessageInitShape<typeof ListAdvisoriesRequestSchema>;

/** The ListAdvisories request of `advisories list`'s flags (usage error for a bad value). */
export function advisoriesRequest(o: Record<string, unknown>): ListRequest {
  const request: ListRequest = {};
  if (o.artifact) request.artifactNames = o.artifact as string[];
  if (o.cve) request.aliases = o.cve as string[];
  if (typeof o.query === "string") request.query = o.query;
  if (typeof o.latestEvent === "string") {
    const type = EVENT_TYPES[o.latestEvent];
    if (type === undefined)
      throw new UsageError(
        `--latest-event must be one of ${Object.keys(EVENT_TYPES).join(", ")} (got "${o.latestEvent}")`,
      );
    request.latestEventType = type;
  }
  if (o.showDeleted) request.showDeleted = true;
  if (typeof o.orderBy === "string") request.orderBy = o.orderBy;
  return request;
}

/** The services `wharf advisories` calls (only these load: see leanClient). */
const SERVICES = { vulnerabilities: VULNERABILITIES_SERVICES };

/** `wharf advisories …`: the security advisories the operator imported. */
export function registerAdvisories(program: Command, bindFor: BindFor): void {
  const bind = bindFor(SERVICES);
  const advisories = subcommand(program, "advisories", CLIENT_GROUPS.advisories);
  advisories
    .command("list")
    .description("list advisories (every filter given must hold)")
    .option("--artifact <name>", "only these artifacts (repeatable, or a,b)", collect)
    .option("--cve <id>", "only advisories with this alias, CVE-… or GHSA-… (repeatable, or a,b)", collect)
    .option("--query <text>", "a case-insensitive part of the artifact or component name or an alias")
    .option(
      "--latest-event <type>",
      `the type of the latest approved event: ${Object.keys(EVENT_TYPES).join(", ")}`,
    )
    .option("--show-deleted", "also withdrawn advisories")
    .option("--order-by <field>", "uid (default), create_time or update_time, then asc or desc")
    .option("--limit <n>", "at most this many (default: all)")
    .action(
      bind(async (ctx, _args, o) => {
        const limit = positiveInt("limit", o.limit);
        const request = { ...advisoriesRequest(o), pageSize: Math.min(limit ?? 200, 200) };
        const rows: Advisory[] = [];
        for await (const a of listAll(ctx.client.vulnerabilities.advisories.listAdvisories, request)) {
          rows.push(a);
          if (limit !== undefined && rows.length >= limit) break;
        }
        print(ctx, rows, advisoryView);
      }),
    );
  advisories
    .command("describe <id>")
    .description("show an advisory with its events: its uid, or its CGA-… id (with --artifact when several)")
    .option("--artifact <name>", "the artifact, when the advisory id covers several")
    .action(
      bind(async (ctx, [id], o) =>
        print(ctx, [await findAdvisory(ctx, id as string, o.artifact)], advisoryView, true),
      ),
    );
}

/**
 * The advisory `id` names: a uid (40 hex) as is, else the one advisory with that advisory id (or
 * legacy id) of `artifact` if given. NOT_FOUND when none; a usage error naming the artifacts when
 * several match.
 */
async function findAdvisory(ctx: CommandContext, id: string, artifact: unknown): Promise<Advisory> {
  const advisories = ctx.client.vulnerabilities.advisories;
  if (/^[0-9a-f]{40}$/.test(id)) return advisories.getAdvisory({ uid: id });
  const artifactNames = typeof artifact === "string" ? [artifact] : [];
  const found: Advisory[] = [];
  for (const key of ["advisoryIds", "legacyAdvisoryIds"] as const) {
    for await (const a of listAll(advisories.listAdvisories, { [key]: [id], artifactNames, pageSize: 200 }))
      found.push(a);
    if (found.length > 0) break;
  }
  if (found.length === 0)
    throw new WharfApiError({ code: Code.NotFound, message: `advisory "${id}" not found` });
  if (found.length > 1)
    throw new UsageError(
      `advisory "${id}" covers ${found.length} artifacts, say which with --artifact: ${found
        .map((a) => a.artifactName)
        .sort()
        .join(", ")}`,
    );
  return found[0] as Advisory;
}
