import { ArtifactsService } from "../../gen/platform/libraries/v2/artifacts_pb.js";
import type { ServiceTable } from "../service-clients.js";

/** The services of the libraries domain (`client.libraries.…`). */
export const LIBRARIES_SERVICES = {
  artifacts: ArtifactsService,
} as const satisfies ServiceTable[string];
