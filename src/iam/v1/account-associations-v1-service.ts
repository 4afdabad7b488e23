import type { ServiceHandlers } from "../../core/service.js";
import { foundOrNothing, withIdFilter } from "../../core/v1-face.js";
import { v1Resource } from "../../core/v1-face-convert.js";
import { v1Crud } from "../../core/v1-face-crud.js";
import {
  AccountAssociationsSchema,
  type GroupAccountAssociations,
} from "../../gen/platform/iam/v1/account_associations_pb.js";
import {
  AccountAssociationSchema,
  AccountAssociationsService,
} from "../../gen/platform/iam/v2/account_associations_pb.js";
import { checkAccountAssociation } from "./account-associations-v1-check.js";

/**
 * A v1 association: the v2 one keyed by `group` (its uid), without timestamps. A PUT replaces every
 * field: a provider block the body omits is removed.
 */
const ASSOCIATION_V1 = v1Resource({
  v1: AccountAssociationsSchema,
  v2: AccountAssociationSchema,
  updatable: ["name", "description", "amazon", "google", "azure", "github"],
  renames: { uid: "group" },
});

/**
 * GroupAccountAssociations (v1): the standard v1 CRUD over the v2 AccountAssociationsService
 * handlers (docs/adr/0030), keyed by `group` (the association's uid, and the parent it is created
 * under). A filter on `group` narrows the v2 List (missing → empty list); PUT is a full
 * replacement; Check (scoped on `group` by the transport) reads the association through the v2 Get.
 */
export function createGroupAccountAssociationsV1Service(
  v2: ServiceHandlers<typeof AccountAssociationsService>,
): ServiceHandlers<typeof GroupAccountAssociations> {
  const face = v1Crud(AccountAssociationsService, v2, ASSOCIATION_V1, "/iam/v2/accountAssociations");
  return {
    create: (req, ctx) => face.create(req.group, ASSOCIATION_V1.toV2(req), ctx),
    update: (req, ctx) => face.update(ASSOCIATION_V1.toV2(req), ctx),
    list: (req, ctx) => face.list({ uidp: withIdFilter(undefined, req.group, "group"), name: req.name }, ctx),
    delete: (req, ctx) => face.delete(req.group, ctx),

    async check(req, ctx) {
      const found = await foundOrNothing(() => face.get(req.group, ctx));
      return checkAccountAssociation(found && ASSOCIATION_V1.toV1(found), req.accountType);
    },
  };
}
