import { create } from "@bufbuild/protobuf";
import { FieldMaskSchema } from "@bufbuild/protobuf/wkt";
import type { ServiceHandlers } from "../../core/service.js";
import { everyV2Item, foundOrNothing, withIdFilter } from "../../core/v1-face.js";
import type { GroupAccountAssociations } from "../../gen/platform/iam/v1/account_associations_pb.js";
import {
  type AccountAssociationsService,
  CreateAccountAssociationRequestSchema,
  DeleteAccountAssociationRequestSchema,
  GetAccountAssociationRequestSchema,
  ListAccountAssociationsRequestSchema,
  UpdateAccountAssociationRequestSchema,
} from "../../gen/platform/iam/v2/account_associations_pb.js";
import { checkAccountAssociation } from "./account-associations-v1-check.js";
import {
  accountAssociationsV1Message,
  accountAssociationV2Input,
} from "./account-associations-v1-mapping.js";

/** Every field a v1 PUT replaces: a provider block the body omits is removed. */
const REPLACED_FIELDS = ["name", "description", "amazon", "google", "azure", "github"];

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
        accountAssociation: accountAssociationV2Input(req),
      });
      return accountAssociationsV1Message(await v2.createAccountAssociation(request, ctx));
    },

    async update(req, ctx) {
      const request = create(UpdateAccountAssociationRequestSchema, {
        accountAssociation: accountAssociationV2Input(req),
        updateMask: create(FieldMaskSchema, { paths: REPLACED_FIELDS }),
      });
      return accountAssociationsV1Message(await v2.updateAccountAssociation(request, ctx));
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
      return { items: associations.map(accountAssociationsV1Message) };
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
      return checkAccountAssociation(found && accountAssociationsV1Message(found), req.accountType);
    },
  };
}
