import type { MessageInitShape } from "@bufbuild/protobuf";
import { toTimestamp } from "../core/api-convert.js";
import type { AccessScopes } from "../core/context.js";
import { invalidArgument } from "../core/errors.js";
import { PageTokenCodec } from "../core/list.js";
import type { ServiceHandlers } from "../core/service.js";
import { requireUidp } from "../core/uidp.js";
import type { AuditLogService, AuditRecordSchema } from "../gen/platform/audit/v2/audit_pb.js";
import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import type { AuditFilter, AuditRow } from "../storage/audit-store.js";
import type { Store } from "../storage/store.js";

/** What AuditLogService needs from the composition root. */
export interface AuditLogServiceDeps {
  store: Pick<Store, "audit">;
  pageTokens: PageTokenCodec;
}

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 500;
const RESULTS = new Set(["OK", "DENIED", "FAILED"]);
const NEEDED = [Capability.CAP_AUDIT_LIST];

/** `value` (RFC 3339) in ms, INVALID_ARGUMENT on `field` when it is not one; undefined when empty. */
function instantOf(field: string, value: string): number | undefined {
  if (value === "") return undefined;
  const ms = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i.test(value)
    ? Date.parse(value)
    : Number.NaN;
  if (Number.isNaN(ms)) throw invalidArgument(field, `"${value.slice(0, 64)}" is not an RFC 3339 time`);
  return ms;
}

/** The API message of a stored record. */
export function auditRecordMessage(row: AuditRow): MessageInitShape<typeof AuditRecordSchema> {
  return {
    uid: row.uid,
    time: toTimestamp(row.time),
    group: row.groupUid,
    actor: { identity: row.actor, ...(row.act === undefined ? {} : { act: row.act }) },
    action: row.action,
    resource: row.resource,
    result: { code: row.resultCode, reason: row.resultReason },
    requestId: row.requestId,
    sourceAddress: row.sourceAddress,
    userAgent: row.userAgent,
  };
}

/**
 * AuditLogService: ListRecords, newest first. With `uidp.descendants_of` the caller needs
 * CAP_AUDIT_LIST at that group (PERMISSION_DENIED otherwise); without it the list covers the
 * groups where the caller holds it (everything for the platform administrator). Filters are exact
 * matches, `start` inclusive and `end` exclusive; other `uidp` fields are INVALID_ARGUMENT.
 */
export function createAuditLogService(deps: AuditLogServiceDeps): ServiceHandlers<typeof AuditLogService> {
  return {
    async listRecords(req, ctx) {
      const uidp = req.uidp;
      if (uidp && (uidp.ancestorsOf || uidp.childrenOf || uidp.inRoot || uidp.ids.length > 0)) {
        throw invalidArgument("uidp", "only uidp.descendants_of is supported");
      }
      const descendantsOf = uidp?.descendantsOf
        ? requireUidp("uidp.descendants_of", uidp.descendantsOf)
        : undefined;
      if (req.result !== "" && !RESULTS.has(req.result)) {
        throw invalidArgument("result", `must be OK, DENIED or FAILED (got "${req.result.slice(0, 32)}")`);
      }
      if (req.pageSize < 0) throw invalidArgument("page_size", "must not be negative");
      const start = instantOf("start", req.start);
      const end = instantOf("end", req.end);
      let within: AccessScopes | undefined;
      if (descendantsOf !== undefined) await ctx.access.require(descendantsOf, NEEDED);
      else within = await ctx.access.scopesWith(NEEDED);
      const filter: AuditFilter = {
        descendantsOf,
        within,
        actor: req.actor || undefined,
        action: req.action || undefined,
        resource: req.resource || undefined,
        resultCode: req.result || undefined,
        start,
        end,
      };
      const limit = req.pageSize === 0 ? DEFAULT_PAGE_SIZE : Math.min(req.pageSize, MAX_PAGE_SIZE);
      // The token is bound to the filters (not to the caller's scopes, which the next page re-reads).
      const queryHash = PageTokenCodec.queryHash({ ...filter, within: undefined, kind: "audit" });
      const resumed = req.pageToken ? deps.pageTokens.decode(req.pageToken, queryHash) : undefined;
      const after = resumed
        ? { time: Number(resumed.cursor.value), seq: Number(resumed.cursor.uid) }
        : undefined;
      const rows = await deps.store.audit.list(filter, { after, limit: limit + 1 });
      const shown = rows.slice(0, limit);
      const last = shown.at(-1);
      return {
        records: shown.map((r) => auditRecordMessage(r.row)),
        nextPageToken:
          rows.length > limit && last
            ? deps.pageTokens.encode(queryHash, { value: last.row.time, uid: String(last.seq) }, 0)
            : "",
      };
    },
  };
}
