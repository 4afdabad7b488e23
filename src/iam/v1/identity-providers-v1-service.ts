import { create } from "@bufbuild/protobuf";
import type { ServiceHandlers } from "../../core/service.js";
import { everyV2Item, withIdFilter } from "../../core/v1-face.js";
import { v1Resource } from "../../core/v1-face-convert.js";
import {
  type IdentityProviders,
  IdentityProviderSchema as IdentityProviderV1Schema,
} from "../../gen/platform/iam/v1/identity_providers_pb.js";
import {
  CreateIdentityProviderRequestSchema,
  DeleteIdentityProviderRequestSchema,
  IdentityProviderSchema,
  type IdentityProvidersService,
  ListIdentityProvidersRequestSchema,
  UpdateIdentityProviderRequestSchema,
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
 * IdentityProviders (v1): a face over the v2 IdentityProvidersService handlers (docs/adr/0030).
 * List gathers every v2 page (a filter on `id` narrows it: missing → empty list); Update is a
 * full replacement through a v2 Update naming every updatable field.
 */
export function createIdentityProvidersV1Service(
  v2: ServiceHandlers<typeof IdentityProvidersService>,
): ServiceHandlers<typeof IdentityProviders> {
  return {
    async create(req, ctx) {
      const request = create(CreateIdentityProviderRequestSchema, {
        parent: req.parentId,
        // Always a provider, empty when the body has none: v2 then refuses its empty name.
        identityProvider: PROVIDER_V1.toV2(req.identityProvider ?? {}),
      });
      return PROVIDER_V1.toV1(await v2.createIdentityProvider(request, ctx));
    },

    async list(req, ctx) {
      const uidp = withIdFilter(req.uidp, req.id);
      if (!uidp) return { items: [] };
      const providers = await everyV2Item(
        "/iam/v2/identityProviders",
        (paging) =>
          v2.listIdentityProviders(
            create(ListIdentityProvidersRequestSchema, { uidp, name: req.name, ...paging }),
            ctx,
          ),
        (page) => page.identityProviders,
      );
      return { items: providers.map(PROVIDER_V1.toV1) };
    },

    async update(req, ctx) {
      const request = create(UpdateIdentityProviderRequestSchema, {
        identityProvider: PROVIDER_V1.toV2(req),
        updateMask: PROVIDER_V1.mask,
      });
      return PROVIDER_V1.toV1(await v2.updateIdentityProvider(request, ctx));
    },

    async delete(req, ctx) {
      await v2.deleteIdentityProvider(create(DeleteIdentityProviderRequestSchema, { uid: req.id }), ctx);
      return {};
    },
  };
}
