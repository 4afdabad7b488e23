import { createApiAuditor } from "../audit/api-audit.js";
import { type AuditBuffer, type AuditBufferOptions, startAuditBuffer } from "../audit/audit-buffer.js";
import { type AuditRetentionOptions, startAuditRetention } from "../audit/audit-retention.js";
import type { WharfConfig } from "../config/config.js";
import type { CallAuditor } from "../core/call-auditor.js";
import type { Clock } from "../core/clock.js";
import type { Store } from "../storage/store.js";

/** The audit log's parts (ADR 0048). */
export interface AuditWing {
  /** The API pipeline's auditor (records of refused calls and of calls that changed nothing). */
  api: CallAuditor;
  /** The batch of records written off the request path (pulls, refused registry requests). */
  buffer: AuditBuffer;
  /** Whether pulls are recorded (`--audit-pulls`). */
  pulls: boolean;
}

/** Tunables of the audit log beyond the configuration (tests). */
export interface AuditTunables {
  buffer?: Partial<AuditBufferOptions> | undefined;
  retention?: Partial<AuditRetentionOptions> | undefined;
}

/**
 * Builds the audit log: the API auditor, the record batch (closed, and so flushed, on close) and
 * the retention job pruning records older than `--audit-retention` (stopped on close).
 */
export function buildAudit(deps: {
  config: WharfConfig["audit"];
  store: Store;
  clock: Clock;
  logger: (line: object) => void;
  tunables?: AuditTunables | undefined;
  onClose: (close: () => Promise<void>) => void;
}): AuditWing {
  const { store, clock, logger } = deps;
  const buffer = startAuditBuffer({ store, logger, options: deps.tunables?.buffer });
  deps.onClose(() => buffer.close());
  const retention = startAuditRetention({
    store,
    clock,
    logger,
    retentionMs: deps.config.retentionMs,
    options: deps.tunables?.retention,
  });
  deps.onClose(() => retention.close());
  return { api: createApiAuditor({ store, clock, logger }), buffer, pulls: deps.config.pulls };
}
