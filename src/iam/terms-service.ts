import { create } from "@bufbuild/protobuf";
import { pageRequestOf, toTimestamp } from "../core/api-convert.js";
import { principalOf } from "../core/context.js";
import { invalidArgument, notFound } from "../core/errors.js";
import { type ListSpec, paginate } from "../core/list.js";
import { pageEnvelope } from "../core/list-specs.js";
import type { ServiceHandlers } from "../core/service.js";
import { newChildUid, selfAndAncestors } from "../core/uidp.js";
import { recordedMutation } from "../events/recorded-mutation.js";
import {
  AcceptTermsResponseSchema,
  TermsAcceptanceSchema,
  type TermsService,
} from "../gen/platform/iam/v2/terms_pb.js";
import type { TermsAcceptanceRow } from "../storage/iam-store.js";
import type { Store } from "../storage/store.js";
import type { IamServiceDeps } from "./service-deps.js";

/** The documents offered when the server is not configured otherwise. */
export const DEFAULT_TERMS_DOCUMENTS: readonly string[] = Object.freeze([
  "sfdpa.v1",
  "guardener-tos.v1",
  "skills-tos.v1",
]);

/** Oldest first by default: the order in which the documents were accepted. */
const ACCEPTANCE_LIST: ListSpec<TermsAcceptanceRow> = {
  allowedOrder: ["uid", "create_time", "update_time"],
  defaultOrder: { field: "create_time", desc: false },
  sortValue: (row, field) => (field === "uid" ? row.uid : row.createTime),
  uidOf: (row) => row.uid,
};

/**
 * TermsService: which of the server's legal documents (`--terms-documents`) a group accepted.
 * Accepting is idempotent per (group, document); a list shows the group's acceptances and those
 * of its ancestors (an organization's acceptance covers its groups). Every accept is one
 * `terms.accepted` event of the group (subject: the group), with the response as its body.
 */
export function createTermsService(deps: IamServiceDeps): ServiceHandlers<typeof TermsService> {
  const { store } = deps;
  const offered = new Set(deps.termsDocuments ?? DEFAULT_TERMS_DOCUMENTS);
  return {
    async acceptTerms(req, ctx) {
      if (req.documentIds.length === 0)
        throw invalidArgument("document_ids", "at least one document id is required");
      const ids = [...new Set(req.documentIds)];
      for (const id of ids) {
        if (!offered.has(id)) {
          throw invalidArgument(
            "document_ids",
            `unknown document "${id}"; offered: ${[...offered].join(", ") || "none"}`,
          );
        }
      }
      if (!(await store.groups.get(req.group))) throw notFound("group", req.group);
      const acceptedBy = principalOf(ctx).identityUid;
      const now = ctx.clock.now();
      const response = create(AcceptTermsResponseSchema, { group: req.group, documentIds: ids });
      const acceptAll = async (tx: Store) => {
        for (const docId of ids) {
          await tx.termsAcceptances.accept({
            uid: newChildUid(req.group),
            groupUid: req.group,
            docId,
            acceptedBy,
            createTime: now,
          });
        }
      };
      await recordedMutation(deps, ctx, acceptAll, {
        resource: "terms",
        verb: "accepted",
        subject: req.group,
        group: req.group,
        schema: AcceptTermsResponseSchema,
        body: response,
      });
      return response;
    },

    async listTermsAcceptances(req) {
      if (!(await store.groups.get(req.group))) throw notFound("group", req.group);
      const groupUids = selfAndAncestors(req.group);
      const page = await paginate(
        pageRequestOf(req),
        { group: req.group },
        ACCEPTANCE_LIST,
        deps.pageTokens,
        (window) => store.termsAcceptances.list({ groupUids }, window),
      );
      return {
        termsAcceptances: page.items.map((row) =>
          create(TermsAcceptanceSchema, {
            docId: row.docId,
            acceptedBy: row.acceptedBy,
            orgUid: row.groupUid,
            createTime: toTimestamp(row.createTime),
          }),
        ),
        ...pageEnvelope(page),
      };
    },
  };
}
