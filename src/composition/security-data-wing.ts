import type { AccessResolver } from "../authz/access.js";
import type { CallAuditor } from "../core/call-auditor.js";
import type { Clock } from "../core/clock.js";
import type { SignedLinks } from "../core/signed-links.js";
import type { EventRecorder } from "../events/event-recorder.js";
import type { RegistryDeps } from "../oci/registry-request.js";
import { rawReportDownloadRoute } from "../plain-routes/raw-report-download-route.js";
import { createVexRoutes } from "../plain-routes/vex-routes.js";
import { createVulnReportRoutes, type VulnReportRoutesDeps } from "../plain-routes/vuln-report-routes.js";
import type { ImageVulnerabilities } from "../registry/supply-chain/supply-chain.js";
import type { BlobDriver } from "../storage/blobs/blob-driver.js";
import type { Store } from "../storage/store.js";
import { clientAddressOf, type TrustedProxies } from "../transport/client-address.js";
import type { ExtraRoute } from "../transport/create-api-handler.js";
import { createVulnReferrerIngest } from "../vulnreports/referrer-ingest.js";
import { createImageVulnerabilities } from "../vulnreports/vex/image-vulnerabilities.js";

/** The security data both faces take in: vulnerability reports uploaded to the API or pushed as referrers. */
export interface SecurityData {
  /**
   * The API's streamed report upload (`POST` under the vuln report prefix, ADR 0024), VEX upload
   * (ADR 0059) and the download of raw reports too large to inline (opened by signed links).
   */
  routes: ExtraRoute[];
  /** The registry's ingest of a pushed manifest's vulnerability report referrer (never rejects). */
  vulnReferrers: NonNullable<RegistryDeps["vulnReferrers"]>;
  /** The unsuppressed findings of images (VEX applied), which pull policies read. */
  imageVulnerabilities: ImageVulnerabilities;
}

/**
 * Builds both ways in for vulnerability reports over the same store, blobs, events and size
 * limit: the API's upload route (authenticated by `verifier`, authorized by `access`) and the
 * registry's referrer ingest, which logs each outcome (a report not stored as a warning).
 */
export function buildSecurityData(deps: {
  store: Store;
  blobs: BlobDriver;
  events: EventRecorder;
  vulnReportMaxBytes: number;
  /** Opens the `rawReportUrl` links of large raw reports. */
  links: SignedLinks;
  /** Authenticates the upload route's bearer tokens (the API verifier). */
  verifier: VulnReportRoutesDeps["verifier"];
  access: AccessResolver;
  clock: Clock;
  logger: (line: object) => void;
  /** Audits the uploads as mutating calls (ADR 0048); none: not audited. */
  audit?: CallAuditor | undefined;
  /** Proxies whose `X-Forwarded-For` names an upload's source address (`--trust-proxy`). */
  trustProxy: TrustedProxies;
}): SecurityData {
  const { store, blobs, events, vulnReportMaxBytes, clock, logger } = deps;
  const routeDeps: VulnReportRoutesDeps = {
    store,
    blobs,
    events,
    vulnReportMaxBytes,
    verifier: deps.verifier,
    clock,
    accessFor: (principal) => deps.access.accessFor(principal),
    audit: deps.audit && {
      auditor: deps.audit,
      clientAddress: (req) => clientAddressOf(req, deps.trustProxy),
    },
  };
  return {
    imageVulnerabilities: createImageVulnerabilities({ store }),
    routes: [
      ...createVulnReportRoutes(routeDeps),
      ...createVexRoutes(routeDeps),
      rawReportDownloadRoute({ links: deps.links, blobs }),
    ],
    vulnReferrers: createVulnReferrerIngest({
      store,
      blobs,
      vulnReportMaxBytes,
      events,
      clock,
      log: (outcome) =>
        logger({
          ...("vexUid" in outcome || ("vex" in outcome && outcome.vex)
            ? outcome.stored
              ? { msg: "VEX document stored" }
              : { level: "warn", msg: "VEX document not stored" }
            : outcome.stored
              ? { msg: "vulnerability report stored" }
              : { level: "warn", msg: "vulnerability report not stored" }),
          event: "vuln-report-referrer",
          ...outcome,
        }),
    }),
  };
}
