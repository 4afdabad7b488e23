import type { ExchangeRequest, Sts } from "../federation/sts.js";
import type { ExtraRoute } from "../transport/create-api-handler.js";
import { bearerToken } from "../transport/pipeline.js";
import { plainRoute, type RouteParams } from "../transport/plain-route.js";

/** ErrorInfo domain of the STS's errors. */
export const STS_DOMAIN = "sts.wharf.dev";

/** Path of the client configuration document (where the CLI learns the registry URL). */
export const AUTH_CONFIG_PATH = "/auth/v1/config";

/** The public client configuration at `/auth/v1/config`. */
export interface AuthConfig {
  issuer: string;
  api_url: string;
  registry_url: string;
  sts_exchange_endpoint: string;
  sts_refresh_endpoint: string;
}

function truthy(value: string): boolean {
  return ["true", "1", "yes"].includes(value.toLowerCase());
}

function exchangeRequest(params: RouteParams): ExchangeRequest {
  return {
    aud: params.all("aud"),
    identity: params.get("identity"),
    identityProvider: params.get("identity_provider"),
    scopes: [...params.all("scopes"), ...params.all("scope")],
    caps: params.all("cap"),
    createRefreshToken: truthy(params.get("create_refresh_token")),
  };
}

/**
 * The STS routes: `GET|POST /sts/exchange` (Bearer = the token to exchange) → `{token, expiry,
 * refreshToken?}`; `POST /sts/exchange_refresh_token` (Bearer = the refresh token) → `{token:
 * {token, expiry}, refreshToken: {token, expiry}}`; `GET /auth/v1/config` → AuthConfig (no token).
 * Parameters come from the query string or a form/JSON body (repeated or comma-joined lists).
 */
export function createFederationRoutes(deps: {
  sts: Sts;
  issuerUrl: string;
  apiUrl: string;
  registryUrl: string;
}): ExtraRoute[] {
  const { sts } = deps;
  const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
  return [
    plainRoute("/sts/exchange", ["GET", "POST"], STS_DOMAIN, async ({ req, params }) => ({
      body: await sts.exchange(bearerToken(header(req.headers.authorization)), exchangeRequest(params)),
    })),
    plainRoute("/sts/exchange_refresh_token", ["POST"], STS_DOMAIN, async ({ req, params }) => {
      const { aud, scopes, caps } = exchangeRequest(params);
      return {
        body: await sts.refresh(bearerToken(header(req.headers.authorization)), { aud, scopes, caps }),
      };
    }),
    plainRoute(AUTH_CONFIG_PATH, ["GET"], STS_DOMAIN, async () => {
      const body: AuthConfig = {
        issuer: deps.issuerUrl,
        api_url: deps.apiUrl,
        registry_url: deps.registryUrl,
        sts_exchange_endpoint: `${deps.issuerUrl}/sts/exchange`,
        sts_refresh_endpoint: `${deps.issuerUrl}/sts/exchange_refresh_token`,
      };
      return { body, headers: { "cache-control": "public, max-age=300" } };
    }),
  ];
}
