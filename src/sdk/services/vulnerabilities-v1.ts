import { Advisories } from "../../gen/platform/vulnerabilities/v1/advisories_pb.js";
import type { ServiceTable } from "../service-clients.js";

/** The services of the vulnerabilities reference API v1 (`client.vulnerabilitiesV1.…`). */
export const VULNERABILITIES_V1_SERVICES = {
  advisories: Advisories,
} as const satisfies ServiceTable[string];
