import type { ServiceHandlers } from "../../core/service.js";
import { withIdFilter } from "../../core/v1-face.js";
import { v1Resource } from "../../core/v1-face-convert.js";
import { v1Crud } from "../../core/v1-face-crud.js";
import {
  type IdentityProviders,
  IdentityProviderSchema as IdentityProviderV1Schema,
} from "../../gen/platform/iam/v1/identity_providers_pb.js";
import {
  IdentityProviderSchema,
  IdentityProvidersService,
} from "../../gen/platform/iam/v2/identity_providers_pb.js";

/**
 * A v1 identity provider: the v2 one (`uid` → `id`) without timestamps; its OIDC block is the same
 * message, already without its client secret. A PUT replaces every field. `oidc` as a whole keeps
 * the stored client secret when the body omits it (v2's rule: only an explicit `oidc.client_secret`
 * path clears it, and v1 clients never see the secret to send it back) and leaves the immutable
 * correlation rule alone when the body does not restate it.
 */
const PROVIDER_V1 = v1Resource({
  v1: IdentityProviderV1Schema,
  v2: IdentityProviderSchema,
  updatable: ["name", "description", "default_role", "oidc"],
});

/**
 * IdentityProviders (v1): the standard v1 CRUD over the v2 IdentityProvidersService handlers
 * (docs/adr/0030). List gathers every v2 page (a filter on `id` narrows it: missing → empty list);
 * Update is a full replacement through a v2 Update naming every updatable field.
 */
export function createIdentityProvidersV1Service(
  v2: ServiceHandlers<typeof IdentityProvidersService>,
): ServiceHandlers<typeof IdentityProviders> {
  const face = v1Crud(IdentityProvidersService, v2, PROVIDER_V1, "/iam/v2/identityProviders");
  return {
    // Always a provider, empty when the body has none: v2 then refuses its empty name.
    create: (req, ctx) => face.create(req.parentId, PROVIDER_V1.toV2(req.identityProvider ?? {}), ctx),

    async list(req, ctx) {
      const uidp = withIdFilter(req.uidp, req.id);
      return uidp ? face.list({ uidp, name: req.name }, ctx) : { items: [] };
    },

    update: (req, ctx) => face.update(PROVIDER_V1.toV2(req), ctx),
    delete: (req, ctx) => face.delete(req.id, ctx),
  };
}
