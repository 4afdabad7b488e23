import type { DescService } from "@bufbuild/protobuf";
import type { WHARF_SERVICES } from "./services.js";

type WharfServices = typeof WHARF_SERVICES;

/** How one entry of WHARF_SERVICES is loaded: its module, imported on demand. */
export type ServiceLoader<T> = T extends DescService
  ? { readonly kind: "service"; load(): Promise<T> }
  : { readonly kind: "domain"; load(): Promise<T> };

/**
 * Each entry of WHARF_SERVICES by dynamic import of its own module, so a bundler puts each domain's
 * descriptors in a chunk of its own and a page pays only for the domains it calls. Typed against
 * WHARF_SERVICES (a type import: nothing of it is loaded here), so a domain added there and not
 * here fails to compile.
 */
export const SERVICE_LOADERS: { readonly [K in keyof WharfServices]: ServiceLoader<WharfServices[K]> } = {
  ping: {
    kind: "service",
    load: async () => (await import("../gen/platform/ping/v2/ping_pb.js")).PingService,
  },
  iam: { kind: "domain", load: async () => (await import("./services/iam.js")).IAM_SERVICES },
  iamV1: { kind: "domain", load: async () => (await import("./services/iam-v1.js")).IAM_V1_SERVICES },
  registry: { kind: "domain", load: async () => (await import("./services/registry.js")).REGISTRY_SERVICES },
  registryV1: {
    kind: "domain",
    load: async () => (await import("./services/registry-v1.js")).REGISTRY_V1_SERVICES,
  },
  vulnerabilities: {
    kind: "domain",
    load: async () => (await import("./services/vulnerabilities.js")).VULNERABILITIES_SERVICES,
  },
  advisory: { kind: "domain", load: async () => (await import("./services/advisory.js")).ADVISORY_SERVICES },
  libraries: {
    kind: "domain",
    load: async () => (await import("./services/libraries.js")).LIBRARIES_SERVICES,
  },
  events: { kind: "domain", load: async () => (await import("./services/events.js")).EVENTS_SERVICES },
  audit: { kind: "domain", load: async () => (await import("./services/audit.js")).AUDIT_SERVICES },
  pingV1: {
    kind: "service",
    load: async () => (await import("../gen/platform/ping/v1/ping_pb.js")).PingService,
  },
  authV1: { kind: "domain", load: async () => (await import("./services/auth-v1.js")).AUTH_V1_SERVICES },
  eventsV1: {
    kind: "domain",
    load: async () => (await import("./services/events-v1.js")).EVENTS_V1_SERVICES,
  },
  librariesV1: {
    kind: "domain",
    load: async () => (await import("./services/libraries-v1.js")).LIBRARIES_V1_SERVICES,
  },
  advisoryV1: {
    kind: "domain",
    load: async () => (await import("./services/advisory-v1.js")).ADVISORY_V1_SERVICES,
  },
  vulnerabilitiesV1: {
    kind: "domain",
    load: async () => (await import("./services/vulnerabilities-v1.js")).VULNERABILITIES_V1_SERVICES,
  },
};
