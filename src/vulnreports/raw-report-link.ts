import type { SignedLinks } from "../core/signed-links.js";

/** Where a raw report too large to inline is fetched (`?token=`), on the API's origin. */
export const RAW_REPORT_DOWNLOAD_PATH = "/registry/v1/vuln_reports/raw/download";
/** The signed-link purpose of raw report downloads (a link minted for another purpose never opens one). */
export const RAW_REPORT_LINK_PURPOSE = "raw-vuln-report";
/** How long a `rawReportUrl` works. */
export const RAW_REPORT_LINK_TTL_MS = 15 * 60 * 1000;

/** Mints the expiring URL of a raw report's bytes (stored content-addressed under `rawDigest`). */
export type RawReportLinker = (rawDigest: string) => Promise<string>;

/** A {@link RawReportLinker} for the API served at `apiUrl`. */
export function rawReportLinker(links: SignedLinks, apiUrl: string): RawReportLinker {
  return async (rawDigest) => {
    const url = new URL(RAW_REPORT_DOWNLOAD_PATH, apiUrl);
    url.searchParams.set(
      "token",
      await links.mint(RAW_REPORT_LINK_PURPOSE, rawDigest, RAW_REPORT_LINK_TTL_MS),
    );
    return url.toString();
  };
}
