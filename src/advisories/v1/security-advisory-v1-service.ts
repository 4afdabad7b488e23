import { create } from "@bufbuild/protobuf";
import type { ServiceHandlers } from "../../core/service.js";
import { everyV2Item } from "../../core/v1-face.js";
import { v1Resource } from "../../core/v1-face-convert.js";
import {
  type SecurityAdvisory,
  VulnerabilityMetadataSchema,
} from "../../gen/platform/advisory/v1/security_advisory_pb.js";
import {
  ListDocumentsRequestSchema,
  ListVulnerabilityMetadataRequestSchema,
  ResolvedVulnsRequestSchema,
  type SecurityAdvisoryService,
  VulnerabilityMetadataSchema as V2VulnerabilityMetadataSchema,
} from "../../gen/platform/advisory/v2/security_advisory_pb.js";

/** The v1 metadata of a v2 one: the same, with `severities` named `severity`. */
const METADATA_V1 = v1Resource({
  v1: VulnerabilityMetadataSchema,
  v2: V2VulnerabilityMetadataSchema,
  updatable: [],
  renames: { severities: "severity" },
});

/**
 * The v1 SecurityAdvisory service, a face over the v2 SecurityAdvisoryService handlers `feed`
 * (docs/adr/0030): answers wrapped as `items`, metadata answered whole, resolved vulnerabilities
 * between `from` and `to` (the v2 `start_time`, `end_time`).
 */
export function createSecurityAdvisoryV1Service(
  feed: ServiceHandlers<typeof SecurityAdvisoryService>,
): ServiceHandlers<typeof SecurityAdvisory> {
  return {
    async listDocuments(req, ctx) {
      const answer = await feed.listDocuments(
        create(ListDocumentsRequestSchema, { id: req.id, cves: req.cves }),
        ctx,
      );
      return { items: answer.documents ?? [] };
    },

    async listVulnerabilityMetadata(req, ctx) {
      const found = await everyV2Item(
        "/advisory/v2/metadata",
        (paging) =>
          feed.listVulnerabilityMetadata(
            create(ListVulnerabilityMetadataRequestSchema, { id: req.id, ids: req.ids, ...paging }),
            ctx,
          ),
        (page) => page.vulnerabilityMetadata,
      );
      return { items: found.map(METADATA_V1.toV1) };
    },

    async resolvedVulns(req, ctx) {
      const answer = await feed.resolvedVulns(
        create(ResolvedVulnsRequestSchema, {
          imageRefs: req.imageRefs,
          ...(req.from ? { startTime: req.from } : {}),
          ...(req.to ? { endTime: req.to } : {}),
        }),
        ctx,
      );
      return { items: answer.resolvedVulnsReports ?? [] };
    },
  };
}
