import type { ServerResponse } from "node:http";
import { Code } from "@connectrpc/connect";
import { DomainError } from "../core/errors.js";
import type { SignedLinks } from "../core/signed-links.js";
import { parseDigest } from "../registry/digest.js";
import type { BlobDriver } from "../storage/blobs/blob-driver.js";
import { blobKey } from "../storage/blobs/blob-layout.js";
import type { ExtraRoute } from "../transport/create-api-handler.js";
import { domainForPackage, toDomainError } from "../transport/error-mapping.js";
import { sendError } from "../transport/http-response.js";
import {
  RAW_REPORT_DOWNLOAD_PATH,
  RAW_REPORT_LINK_PURPOSE,
  RAW_REPORT_LINK_TTL_MS,
} from "../vulnreports/raw-report-link.js";

const DOMAIN = domainForPackage("platform.registry.v1");

/**
 * `GET /registry/v1/vuln_reports/raw/download?token=…`: the raw report a GetRawVulnReport answer's
 * `rawReportUrl` names, streamed from blob storage as `application/json`. The token is the
 * authorization (the caller of GetRawVulnReport held `vuln_report.list` where the report is): no
 * API token is needed, so any HTTP client can follow the link. A malformed, tampered or expired
 * token answers 401 UNAUTHENTICATED (ask GetRawVulnReport again); a report whose bytes are gone
 * (garbage-collected) answers 404.
 */
export function rawReportDownloadRoute(deps: { links: SignedLinks; blobs: BlobDriver }): ExtraRoute {
  return {
    path: RAW_REPORT_DOWNLOAD_PATH,
    method: "GET",
    async handler(req, res) {
      const noStore = { "cache-control": "no-store" };
      try {
        const token = new URL(req.url ?? "/", "http://localhost").searchParams.get("token") ?? "";
        const rawDigest = await deps.links.open(RAW_REPORT_LINK_PURPOSE, token);
        if (rawDigest === undefined) {
          throw new DomainError(
            Code.Unauthenticated,
            `the link is invalid or has expired (links last ${RAW_REPORT_LINK_TTL_MS / 60_000} minutes): ask GetRawVulnReport for a new one`,
          );
        }
        const key = blobKey(parseDigest(rawDigest));
        const stat = await deps.blobs.stat(key);
        if (!stat) throw new DomainError(Code.NotFound, "the raw report is no longer stored");
        (res as ServerResponse).writeHead(200, {
          ...noStore,
          "content-type": "application/json",
          "content-length": String(stat.size),
        });
        await deps.blobs.pipeTo(key, res as ServerResponse);
      } catch (err) {
        sendError(req, res, toDomainError(err), DOMAIN, noStore);
      }
    },
  };
}
