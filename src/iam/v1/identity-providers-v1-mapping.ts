import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type IdentityProvider as IdentityProviderV1,
  IdentityProviderSchema as IdentityProviderV1Schema,
} from "../../gen/platform/iam/v1/identity_providers_pb.js";
import {
  type IdentityProvider,
  IdentityProviderSchema,
} from "../../gen/platform/iam/v2/identity_providers_pb.js";

/**
 * The v1 shape of an identity provider a v2 handler answered: `uid` becomes `id`, timestamps are
 * dropped, and the OIDC block (already without its client secret) carries over.
 */
export function identityProviderV1Message(
  answer: MessageInitShape<typeof IdentityProviderSchema>,
): IdentityProviderV1 {
  const v2 = create(IdentityProviderSchema, answer);
  return create(IdentityProviderV1Schema, {
    id: v2.uid,
    name: v2.name,
    description: v2.description,
    defaultRole: v2.defaultRole,
    configuration: v2.configuration,
  });
}

/** The v2 resource a v1 request body describes, named `uid` (empty on create). */
export function identityProviderV2Input(v1: IdentityProviderV1 | undefined, uid: string): IdentityProvider {
  return create(IdentityProviderSchema, {
    uid,
    name: v1?.name ?? "",
    description: v1?.description ?? "",
    defaultRole: v1?.defaultRole ?? "",
    configuration: v1?.configuration ?? { case: undefined },
  });
}
