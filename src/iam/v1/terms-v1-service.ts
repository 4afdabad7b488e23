import { create } from "@bufbuild/protobuf";
import type { ServiceHandlers } from "../../core/service.js";
import { everyV2Item } from "../../core/v1-face.js";
import type { Terms } from "../../gen/platform/iam/v1/terms_pb.js";
import {
  AcceptTermsRequestSchema,
  ListTermsAcceptancesRequestSchema,
  TermsAcceptanceSchema,
  type TermsService,
} from "../../gen/platform/iam/v2/terms_pb.js";

/**
 * The v1 Terms service: a translation over the v2 TermsService handlers `terms`. Acceptances are
 * listed unpaged as `{docId, acceptedBy, acceptedAt}` (v2's `createTime`).
 */
export function createTermsV1Service(
  terms: ServiceHandlers<typeof TermsService>,
): ServiceHandlers<typeof Terms> {
  return {
    async accept(req, ctx) {
      const v2Request = create(AcceptTermsRequestSchema, { group: req.group, documentIds: req.documentIds });
      const accepted = await terms.acceptTerms(v2Request, ctx);
      return { group: accepted.group ?? "", documentIds: accepted.documentIds ?? [] };
    },

    async list(req, ctx) {
      const all = await everyV2Item(
        `/iam/v2/terms/${req.group}`,
        (paging) =>
          terms.listTermsAcceptances(
            create(ListTermsAcceptancesRequestSchema, { group: req.group, ...paging }),
            ctx,
          ),
        (page) => page.termsAcceptances,
      );
      return {
        items: all.map((init) => {
          const acceptance = create(TermsAcceptanceSchema, init);
          return {
            docId: acceptance.docId,
            acceptedBy: acceptance.acceptedBy,
            ...(acceptance.createTime ? { acceptedAt: acceptance.createTime } : {}),
          };
        }),
      };
    },
  };
}
