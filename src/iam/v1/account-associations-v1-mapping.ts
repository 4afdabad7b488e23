import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type AccountAssociations,
  AccountAssociationsSchema,
} from "../../gen/platform/iam/v1/account_associations_pb.js";
import {
  type AccountAssociation,
  AccountAssociationSchema,
} from "../../gen/platform/iam/v2/account_associations_pb.js";

/** The v1 shape of an association a v2 handler answered: keyed by `group` (the v2 uid), no timestamps. */
export function accountAssociationsV1Message(
  answer: MessageInitShape<typeof AccountAssociationSchema>,
): AccountAssociations {
  const v2 = create(AccountAssociationSchema, answer);
  return create(AccountAssociationsSchema, {
    group: v2.uid,
    name: v2.name,
    description: v2.description,
    amazon: v2.amazon,
    google: v2.google,
    azure: v2.azure,
    github: v2.github,
  });
}

/** The v2 resource a v1 body describes: the association of group `v1.group`. */
export function accountAssociationV2Input(v1: AccountAssociations): AccountAssociation {
  return create(AccountAssociationSchema, {
    uid: v1.group,
    name: v1.name,
    description: v1.description,
    amazon: v1.amazon,
    google: v1.google,
    azure: v1.azure,
    github: v1.github,
  });
}
