import { create } from "@bufbuild/protobuf";
import type { ServiceHandlers } from "../../core/service.js";
import { itemsOf } from "../../core/v1-face.js";
import { v1Crud } from "../../core/v1-face-crud.js";
import { Capability } from "../../gen/platform/capabilities/capabilities_pb.js";
import type { Identities } from "../../gen/platform/iam/v1/identities_pb.js";
import { IdentitiesService, LookupIdentityRequestSchema } from "../../gen/platform/iam/v2/identities_pb.js";
import { IDENTITY_V1, identityV1Message, identityV2Input } from "./identities-v1-mapping.js";

/** The v1 Identities service: the standard v1 CRUD over the v2 IdentitiesService handlers `identities`. */
export function createIdentitiesV1Service(
  identities: ServiceHandlers<typeof IdentitiesService>,
): ServiceHandlers<typeof Identities> {
  const face = v1Crud(IdentitiesService, identities, IDENTITY_V1, "/iam/v2/identities");
  return {
    create: (req, ctx) => face.create(req.parentId, req.identity && identityV2Input(req.identity), ctx),

    async list(req, ctx) {
      if (req.id !== "") {
        const found = await face.getIfListed(req.id, [Capability.CAP_IAM_IDENTITY_LIST], ctx);
        return { items: itemsOf(found).map(identityV1Message) };
      }
      return face.list({ uidp: req.uidp }, ctx);
    },

    update: (req, ctx) => face.update(identityV2Input(req), ctx),
    delete: (req, ctx) => face.delete(req.id, ctx),

    async lookup(req, ctx) {
      const v2Request = create(LookupIdentityRequestSchema, { issuer: req.issuer, subject: req.subject });
      return { id: (await identities.lookupIdentity(v2Request, ctx)).uid ?? "" };
    },
  };
}
