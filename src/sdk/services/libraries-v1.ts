import { Artifacts } from "../../gen/platform/libraries/v1/artifacts_pb.js";
import type { ServiceTable } from "../service-clients.js";

/** The services of the libraries reference API v1 (`client.librariesV1.…`). */
export const LIBRARIES_V1_SERVICES = {
  artifacts: Artifacts,
} as const satisfies ServiceTable[string];
