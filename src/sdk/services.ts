import { PingService as PingServiceV1 } from "../gen/platform/ping/v1/ping_pb.js";
import { PingService } from "../gen/platform/ping/v2/ping_pb.js";
import type { ServiceTable } from "./service-clients.js";
import { ADVISORY_SERVICES } from "./services/advisory.js";
import { ADVISORY_V1_SERVICES } from "./services/advisory-v1.js";
import { AUDIT_SERVICES } from "./services/audit.js";
import { AUTH_V1_SERVICES } from "./services/auth-v1.js";
import { EVENTS_SERVICES } from "./services/events.js";
import { EVENTS_V1_SERVICES } from "./services/events-v1.js";
import { IAM_SERVICES } from "./services/iam.js";
import { IAM_V1_SERVICES } from "./services/iam-v1.js";
import { LIBRARIES_SERVICES } from "./services/libraries.js";
import { LIBRARIES_V1_SERVICES } from "./services/libraries-v1.js";
import { REGISTRY_SERVICES } from "./services/registry.js";
import { REGISTRY_V1_SERVICES } from "./services/registry-v1.js";
import { VULNERABILITIES_SERVICES } from "./services/vulnerabilities.js";
import { VULNERABILITIES_V1_SERVICES } from "./services/vulnerabilities-v1.js";

export type { ServiceTable } from "./service-clients.js";
export {
  ADVISORY_SERVICES,
  AUDIT_SERVICES,
  EVENTS_SERVICES,
  IAM_SERVICES,
  LIBRARIES_SERVICES,
  REGISTRY_SERVICES,
  VULNERABILITIES_SERVICES,
};

/**
 * Every service of the platform API, grouped by domain: `client.iam.groups`,
 * `client.registry.repos`… A new service is one line here or in its domain's table (its client,
 * types and paging helpers follow from the descriptor). Each domain of the current API has its own
 * module (`services/iam.ts`: IAM_SERVICES…, `services/iam-v1.ts` for the v1 reference API), so a program that calls one domain (the CLI's lean
 * client) loads only that domain's descriptors, and the console's lazy client
 * (`createLazyWharfClient`) loads each domain's module on its first call.
 */
export const WHARF_SERVICES = {
  ping: PingService,
  iam: IAM_SERVICES,
  iamV1: IAM_V1_SERVICES,
  registry: REGISTRY_SERVICES,
  registryV1: REGISTRY_V1_SERVICES,
  vulnerabilities: VULNERABILITIES_SERVICES,
  advisory: ADVISORY_SERVICES,
  libraries: LIBRARIES_SERVICES,
  events: EVENTS_SERVICES,
  audit: AUDIT_SERVICES,
  pingV1: PingServiceV1,
  authV1: AUTH_V1_SERVICES,
  eventsV1: EVENTS_V1_SERVICES,
  librariesV1: LIBRARIES_V1_SERVICES,
  advisoryV1: ADVISORY_V1_SERVICES,
  vulnerabilitiesV1: VULNERABILITIES_V1_SERVICES,
} as const satisfies ServiceTable;
