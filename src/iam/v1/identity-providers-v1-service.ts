import { create } from "@bufbuild/protobuf";
import { FieldMaskSchema } from "@bufbuild/protobuf/wkt";
import type { ServiceHandlers } from "../../core/service.js";
import { everyV2Item, withIdFilter } from "../../core/v1-face.js";
import type { IdentityProviders } from "../../gen/platform/iam/v1/identity_providers_pb.js";
import {
  CreateIdentityProviderRequestSchema,
  DeleteIdentityProviderRequestSchema,
  type IdentityProvidersService,
  ListIdentityProvidersRequestSchema,
  UpdateIdentityProviderRequestSchema,
} from "../../gen/platform/iam/v2/identity_providers_pb.js";
import { identityProviderV1Message, identityProviderV2Input } from "./identity-providers-v1-mapping.js";

/**
 * Every field a v1 PUT replaces. `oidc` as a whole keeps the stored client secret when the body
 * omits it (v2's rule: only an explicit `oidc.client_secret` path clears it, and v1 clients never
 * see the secret to send it back) and leaves the immutable correlation rule alone when the body
 * does not restate it.
 */
const REPLACED_FIELDS = ["name", "description", "default_role", "oidc"];

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
        identityProvider: identityProviderV2Input(req.identityProvider, ""),
      });
      return identityProviderV1Message(await v2.createIdentityProvider(request, ctx));
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
      return { items: providers.map(identityProviderV1Message) };
    },

    async update(req, ctx) {
      const request = create(UpdateIdentityProviderRequestSchema, {
        identityProvider: identityProviderV2Input(req, req.id),
        updateMask: create(FieldMaskSchema, { paths: REPLACED_FIELDS }),
      });
      return identityProviderV1Message(await v2.updateIdentityProvider(request, ctx));
    },

    async delete(req, ctx) {
      await v2.deleteIdentityProvider(create(DeleteIdentityProviderRequestSchema, { uid: req.id }), ctx);
      return {};
    },
  };
}
