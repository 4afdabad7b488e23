import { SIGNING_ALG } from "./signing-keys.js";

/** Path of the OpenID Provider metadata document, relative to the issuer URL. */
export const OPENID_CONFIGURATION_PATH = "/.well-known/openid-configuration";
/** Path of the public key set, relative to the issuer URL. */
export const JWKS_PATH = "/.well-known/jwks.json";

/** The OpenID Provider metadata Wharf publishes (OpenID Connect Discovery 1.0, section 3). */
export interface OpenIdConfiguration {
  issuer: string;
  jwks_uri: string;
  authorization_endpoint: string;
  response_types_supported: string[];
  subject_types_supported: string[];
  id_token_signing_alg_values_supported: string[];
  scopes_supported: string[];
  claims_supported: string[];
}

/**
 * The metadata for `issuerUrl` (no trailing slash). `authorization_endpoint` (required by the spec)
 * points at the interactive login under `/oauth`; tokens are otherwise obtained from `/sts/exchange`,
 * which is not an OAuth token endpoint and so is not advertised as one.
 */
export function openIdConfiguration(issuerUrl: string): OpenIdConfiguration {
  return {
    issuer: issuerUrl,
    jwks_uri: `${issuerUrl}${JWKS_PATH}`,
    authorization_endpoint: `${issuerUrl}/oauth`,
    response_types_supported: ["id_token"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [SIGNING_ALG],
    scopes_supported: ["openid"],
    claims_supported: ["iss", "sub", "aud", "iat", "exp", "jti", "act", "scope", "cap"],
  };
}
