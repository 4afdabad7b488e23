import type { CallAuditor } from "../core/call-auditor.js";
import type { Clock } from "../core/clock.js";
import type { CallAudit, Principal } from "../core/context.js";
import type { Store } from "../storage/store.js";
import { auditRow, resultOfError } from "./audit-rows.js";

/** What a change tells the audit log: the resource it touched and the group it belongs to. */
export interface AuditedChange {
  resource: string;
  group: string;
}

/**
 * Writes the OK record of the call `ctx` belongs to in `tx`, the change's transaction, when the
 * call is audited (a mutating RPC) and its record is not written yet: one INSERT, the first
 * change of the call naming the record's resource and group, unless the call names another
 * existing resource by uid (`CallAudit.target`): then that one. Does nothing for other contexts
 * (reads, registry writes, background jobs).
 */
export async function auditChangeIn(
  tx: Store,
  ctx: {
    readonly principal: Principal | undefined;
    readonly clock: Clock;
    readonly audit?: CallAudit | undefined;
  },
  change: AuditedChange,
): Promise<void> {
  const audit = ctx.audit;
  if (audit === undefined || audit.recorded) return;
  // A change to another resource than the one the call names (a run's tag deletes) is recorded
  // under the named one, as a refusal of the same call would be.
  const target =
    audit.target !== undefined && audit.target.resource !== change.resource ? audit.target : change;
  await tx.audit.append([
    auditRow(ctx.principal, audit, {
      time: ctx.clock.now(),
      action: audit.action,
      resource: target.resource,
      group: target.group,
      resultCode: "OK",
    }),
  ]);
  audit.recorded = true;
}

/**
 * Writes, in its own transaction, the record of a mutating call that was refused or failed, or
 * that succeeded without recording a change. Never rejects: a store failure is logged (the
 * call's answer is already decided).
 */
export function createApiAuditor(deps: {
  store: Pick<Store, "audit">;
  clock: Clock;
  logger: (line: object) => void;
}): CallAuditor {
  return {
    async finished(call) {
      if (call.error === undefined && call.audit.recorded) return;
      const result =
        call.error === undefined
          ? { resultCode: "OK" as const }
          : resultOfError(call.error.error, call.error.codeName);
      try {
        await deps.store.audit.append([
          auditRow(call.principal, call.audit, {
            time: deps.clock.now(),
            action: call.audit.action,
            resource: call.resource,
            group: call.group,
            ...result,
          }),
        ]);
      } catch (err) {
        deps.logger({
          level: "error",
          msg: "audit record could not be written",
          requestId: call.audit.requestId,
          action: call.audit.action,
          error: String(err),
        });
      }
    },
  };
}
