import { CALLBACK_PATH, type createLoginFlow } from "../login/login-flow.js";
import type { ExtraRoute } from "../transport/create-api-handler.js";
import { plainRoute } from "../transport/plain-route.js";

/** ErrorInfo domain of the login routes' errors. */
const DOMAIN = "auth.wharf.dev";

/**
 * The browser login's routes on the API port:
 * - `GET /oauth?redirect=&code_challenge=&code_challenge_method=S256&identity_provider=&audience=&state=&create_refresh_token=&login_hint=`
 *   → 302 to the identity provider;
 * - `GET /oauth/callback?code=&state=` (the provider's redirect) → 302 to the CLI's loopback
 *   callback with `code` (or `error`);
 * - `POST /oauth/token` form `{code, code_verifier}` → `{token, expiry, refreshToken?}`.
 */
export function createLoginRoutes(flow: ReturnType<typeof createLoginFlow>): ExtraRoute[] {
  return [
    plainRoute("/oauth", ["GET"], DOMAIN, async ({ params }) => ({
      redirect: await flow.start({
        redirect: params.get("redirect"),
        codeChallenge: params.get("code_challenge"),
        codeChallengeMethod: params.get("code_challenge_method"),
        identityProvider: params.get("identity_provider"),
        audience: params.get("audience"),
        state: params.get("state"),
        refresh: params.get("create_refresh_token") !== "false",
        loginHint: params.get("login_hint"),
      }),
    })),
    plainRoute(CALLBACK_PATH, ["GET"], DOMAIN, async ({ params }) => ({
      redirect: await flow.callback({
        state: params.get("state"),
        code: params.get("code"),
        error: params.get("error"),
      }),
    })),
    plainRoute("/oauth/token", ["POST"], DOMAIN, async ({ params }) => ({
      body: await flow.redeem({ code: params.get("code"), codeVerifier: params.get("code_verifier") }),
    })),
  ];
}
