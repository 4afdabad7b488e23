/**
 * `wharf/sdk`: a typed client of the Wharf platform API and registry, for Node and browsers
 * (it imports only the generated code, @bufbuild/protobuf and @connectrpc/connect{,-web}). Node
 * extras (a node:http2 transport, the stored `wharf auth login`) are in `wharf/sdk/node`.
 */
export { Code } from "@connectrpc/connect";
export {
  type BrowserLoginParameters,
  browserLoginUrl,
  checkBrowserLogin,
  createPkcePair,
  type LoginTokens,
  type PkcePair,
  randomUrlSafe,
  redeemLoginCode,
} from "./browser-login.js";
export { formatBytes } from "./byte-size.js";
export { createWharfClient, type WharfClient, type WharfClientOptions } from "./client.js";
export type { ClientCore } from "./client-core.js";
export {
  type ErrorReason,
  type ErrorResource,
  type FieldViolation,
  isWharfApiError,
  type PreconditionViolation,
  toWharfApiError,
  WharfApiError,
} from "./errors.js";
export type { FetchFunction } from "./http.js";
export { createLazyWharfClient, preloadServices } from "./lazy-client.js";
// The generated messages, enums and schemas of each domain of the current API, one namespace per
// domain (`iam.Role`, `events.Delivery`, `iam.IdentitySchema`): to build requests, read answers and
// name their types outside a call. (Two domains share message names, hence the namespaces.)
export * as advisory from "./messages/advisory.js";
export * as audit from "./messages/audit.js";
export * as events from "./messages/events.js";
export * as iam from "./messages/iam.js";
export * as libraries from "./messages/libraries.js";
export * as registry from "./messages/registry.js";
export * as vulnerabilities from "./messages/vulnerabilities.js";
export { type ItemOf, type ListMethod, listAll, pages } from "./pages.js";
export {
  MANIFEST_ACCEPT,
  parseReference,
  type Referrer,
  type RegistryHelpers,
  TAG_HISTORY_WINDOW,
  type TagHistoryRecord,
  type TagHistoryWindow,
} from "./registry.js";
export { type ClientsOf, clientsFor, type ServiceTable, typedErrorClient } from "./service-clients.js";
export { ADVISORY_SERVICES } from "./services/advisory.js";
export { AUDIT_SERVICES } from "./services/audit.js";
export { EVENTS_SERVICES } from "./services/events.js";
export { IAM_SERVICES } from "./services/iam.js";
export { LIBRARIES_SERVICES } from "./services/libraries.js";
export { REGISTRY_SERVICES } from "./services/registry.js";
export { VULNERABILITIES_SERVICES } from "./services/vulnerabilities.js";
export { WHARF_SERVICES } from "./services.js";
export {
  type ExchangeParameters,
  exchangeRefreshToken,
  exchangeToken,
  fetchServerConfig,
  type IssuedToken,
  type RefreshedTokens,
  type ServerConfig,
} from "./sts.js";
export {
  cachingTokenSource,
  EXPIRY_MARGIN_MS,
  type StsExchangeOptions,
  staticToken,
  stsExchange,
  type TokenSource,
} from "./token-sources.js";
export {
  countBySeverity,
  filterMatches,
  isFixable,
  type MatchFilter,
  SEVERITY_BY_NAME,
  SEVERITY_NAMES,
  type SeverityCount,
  type SeverityName,
  severityName,
  summarize,
  vulnerabilityIds,
} from "./vuln-summary.js";
export {
  connectWebTransport,
  grpcWebTransport,
  type TransportFactory,
  type TransportSettings,
} from "./web-transports.js";
export { fetchWhoAmI, type WhoAmI, type WhoAmIGroup } from "./who-am-i.js";
