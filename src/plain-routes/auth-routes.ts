import type { Principal } from "../core/context.js";
import { invalidArgument } from "../core/errors.js";
import { type InviteRedemptionDeps, redeemInvite } from "../iam/invite-redemption.js";
import { whoAmI } from "../iam/who-am-i.js";
import type { ExtraRoute } from "../transport/create-api-handler.js";
import { authenticateBearer, plainRoute } from "../transport/plain-route.js";

/** ErrorInfo domain of the /auth/v1 routes. */
const AUTH_DOMAIN = "iam.wharf.dev";

/** What the /auth/v1 routes are built from. */
export interface AuthRoutesDeps extends InviteRedemptionDeps {
  verifier: { authenticate(token: string): Promise<Principal> };
}

/**
 * `POST /auth/v1/register` (redeem an invite code for the caller) and `GET /auth/v1/ok` (who am I),
 * on the API port, answered in google.rpc.Status JSON on failure.
 */
export function createAuthRoutes(deps: AuthRoutesDeps): ExtraRoute[] {
  return [
    plainRoute("/auth/v1/register", ["POST"], AUTH_DOMAIN, async ({ req, params }) => {
      const principal = await authenticateBearer(req, deps.verifier);
      const code = params.get("code");
      if (code === "") throw invalidArgument("code", "is required");
      return { body: await redeemInvite(deps, principal, code) };
    }),
    plainRoute("/auth/v1/ok", ["GET"], AUTH_DOMAIN, async ({ req }) => {
      const principal = await authenticateBearer(req, deps.verifier);
      return { body: await whoAmI(deps.store, principal) };
    }),
  ];
}
