import { create } from "@bufbuild/protobuf";
import type { ServiceHandlers } from "../../core/service.js";
import { allV2Pages } from "../../core/v1-face.js";
import type { Terms } from "../../gen/platform/iam/v1/terms_pb.js";
import {
  AcceptTermsRequestSchema,
  ListTermsAcceptancesRequestSchema,
  TermsAcceptanceSchema,
  type TermsService,
} from "../../gen/platform/iam/v2/terms_pb.js";
import { V2_PAGE_SIZE } from "./v2-page-size.js";

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
      const all = await allV2Pages(`/iam/v2/terms/${req.group}`, async (pageToken) => {
        const page = await terms.listTermsAcceptances(
          create(ListTermsAcceptancesRequestSchema, { group: req.group, pageSize: V2_PAGE_SIZE, pageToken }),
          ctx,
        );
        return { items: page.termsAcceptances ?? [], nextPageToken: page.nextPageToken ?? "" };
      });
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
