import { create } from "@bufbuild/protobuf";
import type { ServiceHandlers } from "../../core/service.js";
import { everyV2Item, withIdFilter } from "../../core/v1-face.js";
import {
  type Advisories,
  type Advisory,
  AdvisorySchema,
} from "../../gen/platform/vulnerabilities/v1/advisories_pb.js";
import {
  type AdvisoriesService,
  ListAdvisoriesRequestSchema,
  type Advisory as V2Advisory,
  AdvisorySchema as V2AdvisorySchema,
} from "../../gen/platform/vulnerabilities/v2/advisories_pb.js";

/** The v1 advisory of a v2 one: `id`, and `created_at`/`updated_at`/`deleted_at` for the v2 times. */
function advisoryV1(a: V2Advisory): Advisory {
  const { $typeName: _, uid, createTime, updateTime, deleteTime, ...same } = a;
  return create(AdvisorySchema, {
    ...same,
    id: uid,
    ...(createTime ? { createdAt: createTime } : {}),
    ...(updateTime ? { updatedAt: updateTime } : {}),
    ...(deleteTime ? { deletedAt: deleteTime } : {}),
  });
}

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
      return { items: found.map((a) => advisoryV1(create(V2AdvisorySchema, a))) };
    },
  };
}
