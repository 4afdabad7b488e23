import type { MessageInitShape } from "@bufbuild/protobuf";
import { invalidArgument } from "../../core/errors.js";
import { v1Resource } from "../../core/v1-face-convert.js";
import {
  type Identity as IdentityV1,
  IdentitySchema as IdentityV1Schema,
} from "../../gen/platform/iam/v1/identities_pb.js";
import { IdentitySchema } from "../../gen/platform/iam/v2/identities_pb.js";

/**
 * A v1 identity: the v2 identity by table (`uid` → `id`, `createTime` → `createdAt`, `updateTime`
 * → `updatedAt`, `lastSeenTime` → `lastSeen`, `staticKeys.expirationTime` → `static.expiration`;
 * a claimMatch is the same message in both versions). A PUT replaces the relationship: it is one of
 * the two, so naming both replaces whichever the body carries.
 */
export const IDENTITY_V1 = v1Resource({
  v1: IdentityV1Schema,
  v2: IdentitySchema,
  updatable: ["name", "description", "claim_match", "static_keys"],
});

export const identityV1Message = IDENTITY_V1.toV1;

/**
 * The v2 identity a v1 body writes (`id`, `name`, `description` and the relationship). A service
 * principal or an AWS identity, which Wharf does not federate, is INVALID_ARGUMENT on its field; no
 * relationship at all is left to the v2 handler to refuse.
 */
export function identityV2Input(v1: IdentityV1): MessageInitShape<typeof IdentitySchema> {
  if (v1.relationship.case === "servicePrincipal") {
    throw invalidArgument(
      "service_principal",
      "Wharf runs no platform service principals; use claim_match or static",
    );
  }
  if (v1.relationship.case === "awsIdentity") {
    throw invalidArgument(
      "aws_identity",
      "Wharf does not federate AWS identities; use claim_match or static",
    );
  }
  return IDENTITY_V1.toV2(v1);
}
