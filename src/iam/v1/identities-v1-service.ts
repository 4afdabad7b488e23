import { create } from "@bufbuild/protobuf";
import type { ServiceHandlers } from "../../core/service.js";
import { everyV2Item, itemsOf, scopedGetOrNothing } from "../../core/v1-face.js";
import { Capability } from "../../gen/platform/capabilities/capabilities_pb.js";
import type { Identities } from "../../gen/platform/iam/v1/identities_pb.js";
import {
  CreateIdentityRequestSchema,
  DeleteIdentityRequestSchema,
  GetIdentityRequestSchema,
  type IdentitiesService,
  ListIdentitiesRequestSchema,
  LookupIdentityRequestSchema,
  UpdateIdentityRequestSchema,
} from "../../gen/platform/iam/v2/identities_pb.js";
import { IDENTITY_V1, identityV1Message, identityV2Input } from "./identities-v1-mapping.js";

/** The v1 Identities service: a translation over the v2 IdentitiesService handlers `identities`. */
export function createIdentitiesV1Service(
  identities: ServiceHandlers<typeof IdentitiesService>,
): ServiceHandlers<typeof Identities> {
  return {
    async create(req, ctx) {
      const v2Request = create(CreateIdentityRequestSchema, {
        parent: req.parentId,
        ...(req.identity ? { identity: identityV2Input(req.identity) } : {}),
      });
      return identityV1Message(await identities.createIdentity(v2Request, ctx));
    },

    async list(req, ctx) {
      if (req.id !== "") {
        const found = await scopedGetOrNothing(ctx, req.id, [Capability.CAP_IAM_IDENTITY_LIST], () =>
          identities.getIdentity(create(GetIdentityRequestSchema, { uid: req.id }), ctx),
        );
        return { items: itemsOf(found).map(identityV1Message) };
      }
      const all = await everyV2Item(
        "/iam/v2/identities",
        (paging) =>
          identities.listIdentities(create(ListIdentitiesRequestSchema, { uidp: req.uidp, ...paging }), ctx),
        (page) => page.identities,
      );
      return { items: all.map(identityV1Message) };
    },

    async update(req, ctx) {
      const v2Request = create(UpdateIdentityRequestSchema, {
        identity: identityV2Input(req),
        updateMask: IDENTITY_V1.mask,
      });
      return identityV1Message(await identities.updateIdentity(v2Request, ctx));
    },

    async delete(req, ctx) {
      await identities.deleteIdentity(create(DeleteIdentityRequestSchema, { uid: req.id }), ctx);
      return {};
    },

    async lookup(req, ctx) {
      const v2Request = create(LookupIdentityRequestSchema, { issuer: req.issuer, subject: req.subject });
      return { id: (await identities.lookupIdentity(v2Request, ctx)).uid ?? "" };
    },
  };
}
