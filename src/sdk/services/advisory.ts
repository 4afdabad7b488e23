import { SecurityAdvisoryService } from "../../gen/platform/advisory/v2/security_advisory_pb.js";
import type { ServiceTable } from "../service-clients.js";

/** The services of the security advisory domain (`client.advisory.…`). */
export const ADVISORY_SERVICES = {
  securityAdvisory: SecurityAdvisoryService,
} as const satisfies ServiceTable[string];
