import type { Command } from "commander";
import { AuditRecordSchema } from "../../../gen/platform/audit/v2/audit_pb.js";
import { GroupsService } from "../../../gen/platform/iam/v2/groups_pb.js";
import { listAll } from "../../../sdk/pages.js";
import { AUDIT_SERVICES } from "../../../sdk/services/audit.js";
import { timeCell, UsageError } from "../output.js";
import { type BindFor, print, subcommand } from "../program.js";
import { groupUid } from "../resolve.js";
import { CLIENT_GROUPS } from "../routing.js";
import { field, protoView } from "../views.js";

const recordView = protoView(AuditRecordSchema, [
  { header: "TIME", cell: (r) => timeCell(r.time) },
  { header: "ACTOR", cell: (r) => r.actor?.identity || "(anonymous)" },
  field("ACTION", "action"),
  field("RESOURCE", "resource"),
  {
    header: "RESULT",
    cell: (r) => (r.result?.reason ? `${r.result.code} ${r.result.reason}` : (r.result?.code ?? "")),
  },
  field("SOURCE", "sourceAddress"),
]);

/** The services `wharf audit` calls (only these load: see leanClient). */
const SERVICES = { iam: { groups: GroupsService }, audit: AUDIT_SERVICES };

const RELATIVE = /^(\d+)(s|m|h|d)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `value` as RFC 3339: given as one, or a duration before now (`24h`, `7d`). */
export function instantOption(flag: string, value: string, now = Date.now()): string {
  const relative = RELATIVE.exec(value);
  if (relative)
    return new Date(now - Number(relative[1]) * UNIT_MS[relative[2] as keyof typeof UNIT_MS]).toISOString();
  if (Number.isNaN(Date.parse(value)) || !value.includes("T")) {
    throw new UsageError(`${flag} takes an RFC 3339 time (2026-11-20T00:00:00Z) or a duration ago (24h, 7d)`);
  }
  return value;
}

interface ListOptions {
  org?: string;
  actor?: string;
  action?: string;
  resource?: string;
  result?: string;
  since?: string;
  until?: string;
  limit: string;
}

/** `wharf audit …`: the audit log (who did what). */
export function registerAudit(program: Command, bindFor: BindFor): void {
  const bind = bindFor(SERVICES);
  const audit = subcommand(program, "audit", CLIENT_GROUPS.audit);
  audit
    .command("list")
    .description("audit records, newest first")
    .option("--org <group>", "only the records of this organization or folder (name or uid)")
    .option("--actor <uid>", "only this identity's")
    .option(
      "--action <action>",
      "only this action (platform.registry.v2.ReposService/DeleteRepo, registry.push…)",
    )
    .option("--resource <uid>", "only those acting on this resource (a uid, or acme/app:latest)")
    .option("--result <result>", "only OK, DENIED or FAILED")
    .option("--since <time>", "from this time: RFC 3339, or a duration ago (24h, 7d)")
    .option("--until <time>", "before this time: RFC 3339, or a duration ago")
    .option("--limit <n>", "at most this many records", "100")
    .action(
      bind(async (ctx, _args, o: ListOptions) => {
        const limit = Number(o.limit);
        if (!Number.isInteger(limit) || limit < 1) throw new UsageError("--limit takes a positive number");
        const result = o.result?.toUpperCase();
        if (result !== undefined && !["OK", "DENIED", "FAILED"].includes(result)) {
          throw new UsageError("--result takes OK, DENIED or FAILED");
        }
        const request = {
          ...(o.org === undefined ? {} : { uidp: { descendantsOf: await groupUid(ctx.client, o.org) } }),
          actor: o.actor ?? "",
          action: o.action ?? "",
          resource: o.resource ?? "",
          result: result ?? "",
          start: o.since === undefined ? "" : instantOption("--since", o.since),
          end: o.until === undefined ? "" : instantOption("--until", o.until),
          pageSize: Math.min(limit, 500),
        };
        const rows = [];
        for await (const r of listAll(ctx.client.audit.log.listRecords, request)) {
          rows.push(r);
          if (rows.length >= limit) break;
        }
        print(ctx, rows, recordView);
      }),
    );
}
