import { AdvisoriesService } from "../../gen/platform/vulnerabilities/v2/advisories_pb.js";
import type { ServiceTable } from "../service-clients.js";

/** The services of the vulnerabilities domain (`client.vulnerabilities.…`). */
export const VULNERABILITIES_SERVICES = {
  advisories: AdvisoriesService,
} as const satisfies ServiceTable[string];
