import type { ServiceHandlers } from "../../core/service.js";
import type { Vex } from "../../gen/platform/registry/v1/vex_pb.js";
import type { VulnReportServiceDeps } from "../service-deps.js";
import { ingestVexDocument } from "./ingest-vex.js";
import { vexDocumentMessage } from "./vex-mapping.js";

/**
 * The v1 Vex service: CreateVexDocument over gRPC and Connect (its REST form, taking the document
 * as the raw body, is a plain route: vex-routes.ts). The transport has checked
 * CAP_VULN_REPORT_CREATE at the repo.
 */
export function createVexService(deps: VulnReportServiceDeps): ServiceHandlers<typeof Vex> {
  return {
    async createVexDocument(req, ctx) {
      const row = await ingestVexDocument(deps, ctx, {
        repoUid: req.repoUid,
        digest: req.digest,
        bytes: req.document,
        source: "upload",
      });
      return vexDocumentMessage(row);
    },
  };
}
