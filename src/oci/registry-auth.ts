import type { IncomingHttpHeaders } from "node:http";
import { type TokenVerifier, WRONG_AUDIENCE } from "../auth/token-verifier.js";
import type { AccessResolver } from "../authz/access.js";
import type { Access, Principal } from "../core/context.js";
import { isDomainError } from "../core/errors.js";
import { isUidp } from "../core/uidp.js";
import { OciError } from "./oci-errors.js";

/** What a registry request does to a repository (the actions of a token scope). */
export type RegistryAction = "pull" | "push" | "delete";

/** Subject of the tokens `/token` issues to callers without credentials. */
export const ANONYMOUS_SUBJECT = "anonymous";

/** One grant of a registry token (Docker token `access` claim). */
export interface AccessEntry {
  type: "repository";
  name: string;
  actions: string[];
}

/** The verified caller of a registry request. */
export interface RegistryCaller {
  /** Undefined when the request carried no credentials. */
  principal: Principal | undefined;
  /** True for no credentials and for anonymous tokens. */
  anonymous: boolean;
  access: Access;
  /**
   * The repositories and actions the token was issued for (`access` claim); undefined when the
   * token carries none (a platform token issued for the registry audience), which leaves only the
   * role bindings to decide.
   */
  tokenGrants: ReadonlyMap<string, ReadonlySet<string>> | undefined;
}

/** Authenticates registry requests and builds the challenges that send clients to `/token`. */
export interface RegistryAuthenticator {
  /**
   * Verifies the `Authorization` header: `Bearer <jwt>` or `Basic` with user `_token` and a JWT as
   * password; none at all is an anonymous caller. The token must come from Wharf's issuer for the
   * registry audience: another audience of Wharf's (e.g. a platform API token) is 403 DENIED as the
   * spec says; anything else that does not verify is 401 with a challenge. `allowExpired` accepts an
   * expired (but otherwise valid) token: upload sessions are authorized when they start.
   */
  authenticate(headers: IncomingHttpHeaders, opts?: { allowExpired?: boolean }): Promise<RegistryCaller>;
  /** 401 UNAUTHORIZED with `WWW-Authenticate: Bearer realm, service[, scope][, error]`. */
  challenge(message: string, scope?: string, error?: "insufficient_scope" | "invalid_token"): OciError;
  /** The `service` value of challenges and tokens (the registry's host). */
  readonly service: string;
  /** The token endpoint URL (`realm`). */
  readonly realm: string;
}

/**
 * Creates the authenticator. `verifier` accepts the registry and API audiences (so a token for the
 * API can be told apart and refused with 403) and the anonymous subject; `expiredVerifier` is the
 * same with a long clock tolerance, used only where `allowExpired` is asked.
 */
export function createRegistryAuthenticator(opts: {
  registryUrl: string;
  verifier: TokenVerifier;
  expiredVerifier: TokenVerifier;
  accessResolver: AccessResolver;
  /** Verifies Basic `<identity uid>:<jwt>` (pull tokens); without it such credentials are refused. */
  pullTokens?: (identityUid: string, jwt: string) => Promise<Principal>;
}): RegistryAuthenticator {
  const { registryUrl, accessResolver } = opts;
  const service = new URL(registryUrl).host;
  const realm = `${registryUrl}/token`;

  function challenge(message: string, scope?: string, error?: string): OciError {
    const params = [`realm="${realm}"`, `service="${service}"`];
    if (scope) params.push(`scope="${scope}"`);
    if (error) params.push(`error="${error}"`);
    return new OciError("UNAUTHORIZED", message, undefined, {
      "www-authenticate": `Bearer ${params.join(",")}`,
    });
  }

  function anonymousCaller(principal?: Principal): RegistryCaller {
    return {
      principal,
      anonymous: true,
      access: accessResolver.accessFor(undefined),
      tokenGrants: principal ? grantsOf(principal.claims) : undefined,
    };
  }

  async function pullToken(identityUid: string, jwt: string): Promise<Principal> {
    if (!opts.pullTokens) throw challenge("pull tokens are not accepted here", undefined, "invalid_token");
    return opts.pullTokens(identityUid, jwt);
  }

  return {
    service,
    realm,
    challenge,
    async authenticate(headers, { allowExpired = false } = {}) {
      const credential = credentialOf(headers.authorization);
      if (credential === undefined) return anonymousCaller();
      if ("refused" in credential) throw challenge(credential.refused, undefined, "invalid_token");
      let principal: Principal;
      try {
        principal =
          credential.identity === undefined
            ? await (allowExpired ? opts.expiredVerifier : opts.verifier).authenticate(credential.token)
            : await pullToken(credential.identity, credential.token);
      } catch (err) {
        if (isDomainError(err) && err.details.reason === WRONG_AUDIENCE) {
          throw new OciError(
            "DENIED",
            `${err.message}: use a token issued for the registry audience ${registryUrl}`,
          );
        }
        throw challenge(
          isDomainError(err) ? err.message : "token could not be verified",
          undefined,
          "invalid_token",
        );
      }
      const aud = principal.claims.aud;
      const audiences = Array.isArray(aud) ? aud : [aud];
      if (!audiences.includes(registryUrl)) {
        throw new OciError(
          "DENIED",
          `token audience is not the registry: use a token issued for the registry audience ${registryUrl}`,
        );
      }
      if (principal.identityUid === ANONYMOUS_SUBJECT) return anonymousCaller(principal);
      return {
        principal,
        anonymous: false,
        access: accessResolver.accessFor(principal),
        tokenGrants: grantsOf(principal.claims),
      };
    },
  };
}

/**
 * The token an Authorization header carries: `Bearer <jwt>`, or Basic with user `_token` and the
 * JWT as password, or Basic with an identity uid as user and that identity's pull-token JWT as
 * password (`identity` set). Undefined for no header (and for the empty Basic credentials some
 * clients send anonymously); `refused` with a reason for anything else (a `Bearer` without a
 * token included).
 */
export function credentialOf(
  authorization: string | undefined,
): { token: string; identity?: string } | { refused: string } | undefined {
  if (!authorization) return undefined;
  const space = authorization.indexOf(" ");
  const scheme = (space < 0 ? authorization : authorization.slice(0, space)).toLowerCase();
  const value = space < 0 ? "" : authorization.slice(space + 1).trim();
  if (scheme === "bearer") {
    return value === ""
      ? { refused: "missing bearer token (Authorization: Bearer <token>)" }
      : { token: value };
  }
  if (scheme !== "basic") return { refused: `unsupported authorization scheme "${scheme.slice(0, 20)}"` };
  const credentials = basicCredentials(value);
  if (!credentials) return { refused: "malformed Basic credentials" };
  if (credentials.user === "" && credentials.password === "") return undefined;
  if (credentials.user === "_token") return { token: credentials.password };
  if (isUidp(credentials.user)) return { identity: credentials.user, token: credentials.password };
  return {
    refused: "unknown username: use _token with a Wharf token, or a pull token's identity uid, as user",
  };
}

/** Decodes Basic credentials; undefined when malformed. */
export function basicCredentials(value: string): { user: string; password: string } | undefined {
  const decoded = Buffer.from(value, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function grantsOf(claims: Readonly<Record<string, unknown>>): Map<string, Set<string>> | undefined {
  const access = claims.access;
  if (!Array.isArray(access)) return undefined;
  const grants = new Map<string, Set<string>>();
  for (const entry of access as unknown[]) {
    if (typeof entry !== "object" || entry === null) continue;
    const { type, name, actions } = entry as Partial<AccessEntry>;
    if (type !== "repository" || typeof name !== "string" || !Array.isArray(actions)) continue;
    const set = grants.get(name) ?? new Set<string>();
    for (const a of actions) if (typeof a === "string") set.add(a);
    grants.set(name, set);
  }
  return grants;
}

/** True when the token's grants (if any) allow `action` on `name`. */
export function tokenAllows(caller: RegistryCaller, name: string, action: RegistryAction): boolean {
  if (caller.tokenGrants === undefined) return !caller.anonymous;
  const actions = caller.tokenGrants.get(name);
  return actions !== undefined && (actions.has(action) || actions.has("*"));
}
