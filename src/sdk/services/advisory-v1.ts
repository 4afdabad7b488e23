import { SecurityAdvisory } from "../../gen/platform/advisory/v1/security_advisory_pb.js";
import type { ServiceTable } from "../service-clients.js";

/** The services of the security advisory reference API v1 (`client.advisoryV1.…`). */
export const ADVISORY_V1_SERVICES = {
  securityAdvisory: SecurityAdvisory,
} as const satisfies ServiceTable[string];
