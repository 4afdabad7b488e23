import { create } from "@bufbuild/protobuf";
import type { ServiceHandlers } from "../../core/service.js";
import { everyV2Item } from "../../core/v1-face.js";
import { v1Resource } from "../../core/v1-face-convert.js";
import {
  ArtifactSchema,
  type Artifacts,
  ArtifactVersionSchema,
  SourceType,
} from "../../gen/platform/libraries/v1/artifacts_pb.js";
import {
  type ArtifactsService,
  CountArtifactsRequestSchema,
  ListArtifactsRequestSchema,
  ListArtifactVersionsRequestSchema,
  ArtifactSchema as V2ArtifactSchema,
  ArtifactVersionSchema as V2ArtifactVersionSchema,
} from "../../gen/platform/libraries/v2/artifacts_pb.js";

/** A v1 artifact: the v2 one by table (`uid` → `id`, `created_at`/`updated_at` for the v2 times). */
const ARTIFACT_V1 = v1Resource({ v1: ArtifactSchema, v2: V2ArtifactSchema, updatable: [] });

/**
 * A v1 version: the v2 one by table. Every version Wharf holds was built from source (`INTERNAL`,
 * or `INTERNAL_REMEDIATED` for a remediated build); Wharf imports no malware scans or upstream
 * dates, so those fields stay empty.
 */
const VERSION_V1 = v1Resource({
  v1: ArtifactVersionSchema,
  v2: V2ArtifactVersionSchema,
  updatable: [],
  v1Extras: (v) => ({ sourceType: v.remediated ? SourceType.INTERNAL_REMEDIATED : SourceType.INTERNAL }),
});

/**
 * The v1 Artifacts service, a face over the v2 ArtifactsService handlers `artifacts`
 * (docs/adr/0030). The artifact list stays paged as in v2 (`next_page_token`,
 * `total_artifacts`); the version list is answered whole. `include_upstream` changes nothing:
 * Wharf's catalogue holds only what was imported.
 */
export function createArtifactsV1Service(
  artifacts: ServiceHandlers<typeof ArtifactsService>,
): ServiceHandlers<typeof Artifacts> {
  return {
    async list(req, ctx) {
      const page = await artifacts.listArtifacts(
        create(ListArtifactsRequestSchema, {
          ecosystems: req.ecosystems,
          query: req.query,
          cudaVersion: req.cudaVersion,
          remediated: req.remediated,
          pageToken: req.pageToken,
          skip: req.skip,
        }),
        ctx,
      );
      return {
        items: (page.artifacts ?? []).map(ARTIFACT_V1.toV1),
        nextPageToken: page.nextPageToken ?? "",
        totalArtifacts: BigInt(page.totalCount ?? 0),
      };
    },

    async listVersions(req, ctx) {
      const versions = await everyV2Item(
        `/libraries/v2/artifacts/${req.id}/versions`,
        (paging) =>
          artifacts.listArtifactVersions(
            create(ListArtifactVersionsRequestSchema, { artifactId: req.id, ...paging }),
            ctx,
          ),
        (page) => page.artifactVersions,
      );
      return { items: versions.map(VERSION_V1.toV1) };
    },

    async count(req, ctx) {
      const answer = await artifacts.countArtifacts(
        create(CountArtifactsRequestSchema, { ecosystems: req.ecosystems }),
        ctx,
      );
      return {
        items: (answer.counts ?? []).map((c) => ({
          ecosystem: c.ecosystem ?? 0,
          count: BigInt(c.totalCount ?? 0),
        })),
      };
    },
  };
}
