import { Auth } from "../../gen/platform/auth/v1/auth_pb.js";
import type { ServiceTable } from "../service-clients.js";

/** The services of the auth reference API v1 (`client.authV1.…`). */
export const AUTH_V1_SERVICES = {
  auth: Auth,
} as const satisfies ServiceTable[string];
