import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { invalidArgument } from "../../core/errors.js";
import {
  type Identity as IdentityV1,
  IdentitySchema as IdentityV1Schema,
  StaticKeysSchema as StaticKeysV1Schema,
} from "../../gen/platform/iam/v1/identities_pb.js";
import { IdentitySchema, StaticKeysSchema } from "../../gen/platform/iam/v2/identities_pb.js";

/**
 * The v1 shape of an identity a v2 handler answered: `uid` → `id`, `createTime` → `createdAt`,
 * `updateTime` → `updatedAt`, `lastSeenTime` → `lastSeen`, `staticKeys.expirationTime` →
 * `static.expiration`; a claimMatch is the same message in both versions.
 */
export function identityV1Message(v2: MessageInitShape<typeof IdentitySchema>): IdentityV1 {
  const identity = create(IdentitySchema, v2);
  const v1 = create(IdentityV1Schema, {
    id: identity.uid,
    name: identity.name,
    description: identity.description,
    createdAt: identity.createTime,
    updatedAt: identity.updateTime,
    lastSeen: identity.lastSeenTime,
  });
  const relationship = identity.relationship;
  if (relationship.case === "claimMatch") v1.relationship = relationship;
  if (relationship.case === "staticKeys") {
    const { issuer, subject, issuerKeys, audiences, expirationTime } = relationship.value;
    v1.relationship = {
      case: "staticKeys",
      value: create(StaticKeysV1Schema, {
        issuer,
        subject,
        issuerKeys,
        audiences,
        expiration: expirationTime,
      }),
    };
  }
  return v1;
}

/**
 * The v2 identity a v1 body writes (`id`, `name`, `description` and the relationship). A service
 * principal or an AWS identity, which Wharf does not federate, is INVALID_ARGUMENT on its field; no
 * relationship at all is left to the v2 handler to refuse.
 */
export function identityV2Input(v1: IdentityV1): MessageInitShape<typeof IdentitySchema> {
  const input: MessageInitShape<typeof IdentitySchema> = {
    uid: v1.id,
    name: v1.name,
    description: v1.description,
  };
  const relationship = v1.relationship;
  switch (relationship.case) {
    case "claimMatch":
      return { ...input, relationship };
    case "staticKeys": {
      const { issuer, subject, issuerKeys, audiences, expiration } = relationship.value;
      const value = create(StaticKeysSchema, {
        issuer,
        subject,
        issuerKeys,
        audiences,
        expirationTime: expiration,
      });
      return { ...input, relationship: { case: "staticKeys", value } };
    }
    case "servicePrincipal":
      throw invalidArgument(
        "service_principal",
        "Wharf runs no platform service principals; use claim_match or static",
      );
    case "awsIdentity":
      throw invalidArgument(
        "aws_identity",
        "Wharf does not federate AWS identities; use claim_match or static",
      );
    default:
      return input;
  }
}
