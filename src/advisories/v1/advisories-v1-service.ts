import { create } from "@bufbuild/protobuf";
import type { ServiceHandlers } from "../../core/service.js";
import { everyV2Item, withIdFilter } from "../../core/v1-face.js";
import { v1Resource } from "../../core/v1-face-convert.js";
import { type Advisories, AdvisorySchema } from "../../gen/platform/vulnerabilities/v1/advisories_pb.js";
import {
  type AdvisoriesService,
  ListAdvisoriesRequestSchema,
  AdvisorySchema as V2AdvisorySchema,
} from "../../gen/platform/vulnerabilities/v2/advisories_pb.js";

/** A v1 advisory: the v2 one by table (`id`, `created_at`/`updated_at`/`deleted_at` for the v2 times). */
const ADVISORY_V1 = v1Resource({ v1: AdvisorySchema, v2: V2AdvisorySchema, updatable: [] });

/**
 * The v1 Advisories service, a face over the v2 AdvisoriesService handlers `advisories`
 * (docs/adr/0030): the v2 filters as they are, `id` joining `uidp.ids`, every page gathered.
 */
export function createAdvisoriesV1Service(
  advisories: ServiceHandlers<typeof AdvisoriesService>,
): ServiceHandlers<typeof Advisories> {
  return {
    async list(req, ctx) {
      const { $typeName: _, id, uidp: given, ...filters } = req;
      const uidp = withIdFilter(given, id);
      if (!uidp) return { items: [] };
      const found = await everyV2Item(
        "/vulnerabilities/v2/advisories",
        (paging) =>
          advisories.listAdvisories(
            create(ListAdvisoriesRequestSchema, { ...filters, uidp, ...paging }),
            ctx,
          ),
        (page) => page.advisories,
      );
      return { items: found.map(ADVISORY_V1.toV1) };
    },
  };
}
