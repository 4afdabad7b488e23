import type { EventRecorder } from "../events/event-recorder.js";
import type { BlobDriver } from "../storage/blobs/blob-driver.js";
import type { Store } from "../storage/store.js";

/** Largest report accepted by default: 256 MiB (a full Grype report of a large image is tens of MiB). */
export const DEFAULT_VULN_REPORT_MAX_BYTES = 256 * 1024 * 1024;

/**
 * The sub-stores the vulnerability report services use: reports and their matches, the repos,
 * manifests and tags reports are of (and tag history, for the daily counts), the VEX documents
 * that suppress matches (ADR 0059), and `transaction`,
 * where a report is written (its `tx` is the whole Store: the registry lock, the event).
 */
export type VulnReportStores = Pick<
  Store,
  "repos" | "manifests" | "tags" | "vulnReports" | "vex" | "transaction"
>;

/** What the vulnerability report services are built from (the composition root provides it). */
export interface VulnReportServiceDeps {
  store: VulnReportStores;
  /** Where the raw report bytes are kept, content-addressed like registry blobs. */
  blobs: BlobDriver;
  events: EventRecorder;
  /** Largest report accepted, in bytes; {@link DEFAULT_VULN_REPORT_MAX_BYTES} when unset. */
  vulnReportMaxBytes?: number;
}
