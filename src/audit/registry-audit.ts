import type { Clock } from "../core/clock.js";
import type { Principal } from "../core/context.js";
import type { AuditRow } from "../storage/audit-store.js";
import type { Store } from "../storage/store.js";
import type { AuditBuffer } from "./audit-buffer.js";
import { auditRow } from "./audit-rows.js";

/** The registry's audit actions. */
export type RegistryAuditAction = "registry.push" | "registry.delete" | "registry.pull" | "registry.token";

/** What the registry knows of the request an audit record describes. */
export interface RegistryRequestFacts {
  principal: Principal | undefined;
  requestId: string;
  sourceAddress: string;
  userAgent: string;
}

/**
 * The registry's audit log (ADR 0048): pushes and deletes in their transactions, pulls (only with
 * `--audit-pulls`) and refused requests batched off the request path.
 */
export interface RegistryAudit {
  /** Whether pulls are audited (`--audit-pulls`); when false `pulled` does nothing. */
  readonly pulls: boolean;
  /**
   * Appends the OK record of a push or delete of `resource` (`<repository>:<tag>` or
   * `<repository>@<digest>`) of the repo `repoUid` in `tx`, the write's transaction.
   */
  changed(
    tx: Store,
    action: "registry.push" | "registry.delete",
    facts: RegistryRequestFacts,
    target: { resource: string; repoUid: string },
  ): Promise<void>;
  /** Queues the OK record of a manifest pull (nothing without `--audit-pulls`). */
  pulled(facts: RegistryRequestFacts, target: { resource: string; repoUid: string }): void;
  /**
   * Queues the OK record of a manifest pull served with a pull policy's warning (ADR 0058), with
   * `reason` (which WARN policies and rules) as its result reason; written with or without
   * `--audit-pulls`.
   */
  warned(facts: RegistryRequestFacts, target: { resource: string; repoUid: string }, reason: string): void;
  /**
   * Queues the DENIED record of a refused request (401 with credentials, 403, 429): `reason` is the
   * OCI error code; the group is looked up at flush time from `repository` (when there is one).
   */
  refused(
    action: RegistryAuditAction,
    facts: RegistryRequestFacts,
    target: { resource: string; repository: string | undefined },
    reason: string,
  ): void;
}

export function createRegistryAudit(deps: {
  clock: Clock;
  buffer: AuditBuffer;
  /** The group records of `repository` belong to: its repo's uid, else its deepest existing group. */
  groupOfRepository: (repository: string) => Promise<string>;
  auditPulls: boolean;
}): RegistryAudit {
  const { clock, buffer } = deps;
  const row = (
    action: RegistryAuditAction,
    facts: RegistryRequestFacts,
    what: { resource: string; group: string; resultCode: AuditRow["resultCode"]; resultReason?: string },
  ) => auditRow(facts.principal, facts, { time: clock.now(), action, ...what });
  return {
    pulls: deps.auditPulls,
    async changed(tx, action, facts, target) {
      await tx.audit.append([
        row(action, facts, { resource: target.resource, group: target.repoUid, resultCode: "OK" }),
      ]);
    },
    pulled(facts, target) {
      if (!deps.auditPulls) return;
      buffer.add({
        row: row("registry.pull", facts, {
          resource: target.resource,
          group: target.repoUid,
          resultCode: "OK",
        }),
      });
    },
    warned(facts, target, reason) {
      buffer.add({
        row: row("registry.pull", facts, {
          resource: target.resource,
          group: target.repoUid,
          resultCode: "OK",
          resultReason: reason,
        }),
      });
    },
    refused(action, facts, target, reason) {
      const repository = target.repository;
      buffer.add({
        row: row(action, facts, {
          resource: target.resource,
          group: "",
          resultCode: "DENIED",
          resultReason: reason,
        }),
        groupOf: repository === undefined ? undefined : () => deps.groupOfRepository(repository),
      });
    },
  };
}
