import { create } from "@bufbuild/protobuf";
import type { ServiceHandlers } from "../../core/service.js";
import { everyV2Item, foundOrNothing, withIdFilter } from "../../core/v1-face.js";
import { v1Resource } from "../../core/v1-face-convert.js";
import {
  AccountAssociationsSchema,
  type GroupAccountAssociations,
} from "../../gen/platform/iam/v1/account_associations_pb.js";
import {
  AccountAssociationSchema,
  type AccountAssociationsService,
  CreateAccountAssociationRequestSchema,
  DeleteAccountAssociationRequestSchema,
  GetAccountAssociationRequestSchema,
  ListAccountAssociationsRequestSchema,
  UpdateAccountAssociationRequestSchema,
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
 * GroupAccountAssociations (v1): a face over the v2 AccountAssociationsService handlers
 * (docs/adr/0030), keyed by `group`. A filter on `group` narrows the v2 List (missing → empty
 * list); PUT is a full replacement; Check (scoped on `group` by the transport) reads the association
 * through the v2 Get.
 */
export function createGroupAccountAssociationsV1Service(
  v2: ServiceHandlers<typeof AccountAssociationsService>,
): ServiceHandlers<typeof GroupAccountAssociations> {
  const getByGroup = (group: string, ctx: Parameters<typeof v2.getAccountAssociation>[1]) =>
    foundOrNothing(() =>
      v2.getAccountAssociation(create(GetAccountAssociationRequestSchema, { uid: group }), ctx),
    );

  return {
    async create(req, ctx) {
      const request = create(CreateAccountAssociationRequestSchema, {
        parent: req.group,
        accountAssociation: ASSOCIATION_V1.toV2(req),
      });
      return ASSOCIATION_V1.toV1(await v2.createAccountAssociation(request, ctx));
    },

    async update(req, ctx) {
      const request = create(UpdateAccountAssociationRequestSchema, {
        accountAssociation: ASSOCIATION_V1.toV2(req),
        updateMask: ASSOCIATION_V1.mask,
      });
      return ASSOCIATION_V1.toV1(await v2.updateAccountAssociation(request, ctx));
    },

    async list(req, ctx) {
      const uidp = withIdFilter(undefined, req.group, "group");
      const associations = await everyV2Item(
        "/iam/v2/accountAssociations",
        (paging) =>
          v2.listAccountAssociations(
            create(ListAccountAssociationsRequestSchema, { uidp, name: req.name, ...paging }),
            ctx,
          ),
        (page) => page.associations,
      );
      return { items: associations.map(ASSOCIATION_V1.toV1) };
    },

    async delete(req, ctx) {
      await v2.deleteAccountAssociation(
        create(DeleteAccountAssociationRequestSchema, { uid: req.group }),
        ctx,
      );
      return {};
    },

    async check(req, ctx) {
      const found = await getByGroup(req.group, ctx);
      return checkAccountAssociation(found && ASSOCIATION_V1.toV1(found), req.accountType);
    },
  };
}
