import { create } from "@bufbuild/protobuf";
import { toTimestamp } from "../core/api-convert.js";
import {
  type IdentityProvider,
  IdentityProvider_OIDCSchema,
  IdentityProviderSchema,
} from "../gen/platform/iam/v2/identity_providers_pb.js";
import type { IdentityProviderRow } from "../storage/iam-store.js";

/** The API message of a stored identity provider: never with its client secret. */
export function identityProviderMessage(row: IdentityProviderRow): IdentityProvider {
  const { clientSecret: _writeOnly, ...oidc } = row.oidc;
  return create(IdentityProviderSchema, {
    uid: row.uid,
    name: row.name,
    description: row.description,
    defaultRole: row.defaultRole,
    createTime: toTimestamp(row.createTime),
    updateTime: toTimestamp(row.updateTime),
    configuration: { case: "oidc", value: create(IdentityProvider_OIDCSchema, oidc) },
  });
}
