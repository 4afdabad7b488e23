import { create } from "@bufbuild/protobuf";
import { principalOf, type RequestContext } from "../../core/context.js";
import { invalidArgument, permissionDenied } from "../../core/errors.js";
import type { ServiceHandlers } from "../../core/service.js";
import { isRoot } from "../../core/uidp.js";
import type { Auth } from "../../gen/platform/auth/v1/auth_pb.js";
import {
  DeleteIdentityRequestSchema,
  type IdentitiesService,
} from "../../gen/platform/iam/v2/identities_pb.js";
import { type InviteRedemptionDeps, redeemInvite } from "../invite-redemption.js";
import type { IamServiceDeps } from "../service-deps.js";
import { callerGrants } from "../who-am-i.js";
import { whoAmIV1Message } from "./auth-v1-who-am-i.js";

/** What the v1 Auth service is built from: the IAM deps and the v2 Identities handlers it deletes through. */
export interface AuthV1Deps extends Pick<IamServiceDeps, "store" | "bindingsChanged" | "events"> {
  identities: ServiceHandlers<typeof IdentitiesService>;
}

/**
 * Auth (v1): `GET /auth/v1/ok` (who am I), `POST /auth/v1/register` (redeem an invite code) and
 * `DELETE /auth/v1/delete/{id}` (the caller's own registration). Each acts on the caller only, so
 * the annotation asks for a token and no capability; the handlers check that the caller is the
 * subject. Delete is the v2 DeleteIdentity (its rules and event) once that check passed.
 */
export function createAuthV1Service(deps: AuthV1Deps): ServiceHandlers<typeof Auth> {
  const redemptionDeps = (ctx: RequestContext): InviteRedemptionDeps => ({ ...deps, clock: ctx.clock });
  return {
    async validate(_req, ctx) {
      const principal = principalOf(ctx);
      const identity = await deps.store.identities.get(principal.identityUid);
      return whoAmIV1Message(principal, identity, await callerGrants(deps.store, principal));
    },

    async register(req, ctx) {
      const principal = principalOf(ctx);
      if (req.code === "") throw invalidArgument("code", "is required");
      if (req.identityId !== "" && req.identityId !== principal.identityUid) {
        throw permissionDenied("an invite can only be redeemed for the caller's own identity");
      }
      return redeemInvite(redemptionDeps(ctx), principal, req.code);
    },

    async delete(req, ctx) {
      const principal = principalOf(ctx);
      if (req.id !== principal.identityUid || !isRoot(req.id) || principal.isAdmin) {
        throw permissionDenied(
          "only the caller's own registration (their root-level identity) can be deleted here",
        );
      }
      await deps.identities.deleteIdentity(create(DeleteIdentityRequestSchema, { uid: req.id }), ctx);
      return {};
    },
  };
}
