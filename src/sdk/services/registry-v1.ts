import { Registry } from "../../gen/platform/registry/v1/registry_pb.js";
import { Vex } from "../../gen/platform/registry/v1/vex_pb.js";
import { Vulnerabilities } from "../../gen/platform/registry/v1/vulnerabilities_pb.js";
import type { ServiceTable } from "../service-clients.js";

/** The services of the registry reference API v1 (`client.registryV1.…`). */
export const REGISTRY_V1_SERVICES = {
  registry: Registry,
  vulnerabilities: Vulnerabilities,
  vex: Vex,
} as const satisfies ServiceTable[string];
