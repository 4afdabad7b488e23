import { AuditLogService } from "../../gen/platform/audit/v2/audit_pb.js";
import type { ServiceTable } from "../service-clients.js";

/** The services of the audit domain (`client.audit.…`). */
export const AUDIT_SERVICES = {
  log: AuditLogService,
} as const satisfies ServiceTable[string];
