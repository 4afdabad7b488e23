import { createHash, randomBytes } from "node:crypto";
import type { Issuer } from "../auth/issuer.js";
import type { Clock } from "../core/clock.js";
import { invalidArgument, isDomainError, permissionDenied } from "../core/errors.js";
import { redeemAuthorizationCode, type UpstreamOidc } from "../oidc/upstream-oidc.js";
import type { Store } from "../storage/store.js";
import { type DefaultLoginProvider, type LoginProvider, resolveLoginProvider } from "./login-provider.js";
import { checkLoginRedirect } from "./login-redirect.js";
import { registerPerson, type VerifiedPerson } from "./register-person.js";
import { SESSION_GRANTS_CLAIM } from "./session-grants.js";

/** Path of the provider's redirect back to Wharf. */
export const CALLBACK_PATH = "/oauth/callback";
/** How long a person has to finish logging in at the provider. */
const AUTHORIZATION_TTL_MS = 10 * 60_000;
/** How long the CLI has to redeem its one-time code. */
const CODE_TTL_MS = 2 * 60_000;
/** Lifetime of a login token; refresh tokens (when allowed) extend the session. */
const LOGIN_TOKEN_TTL_S = 3600;

const AUTHORIZATION = "authorization";
const CODE = "code";

/** A login waiting for the provider's redirect (stored under the hash of `state`). */
interface PendingAuthorization {
  provider: string;
  redirect: string;
  clientState: string;
  challenge: string;
  audience: string;
  nonce: string;
  verifier: string;
  refresh: boolean;
}

/** A finished login waiting for the CLI to redeem its code (stored under the hash of the code). */
interface FinishedLogin {
  identityUid: string;
  audience: string;
  challenge: string;
  act: { iss: string; sub: string; aud: string };
  sessionGrants: string[];
  refresh: boolean;
}

/** Tokens handed to the CLI. */
export interface LoginTokens {
  token: string;
  expiry: string;
  refreshToken?: string;
}

/** Issues a refresh token for a login (the STS owns refresh tokens). */
export type RefreshTokenIssuer = (args: {
  identityUid: string;
  audience: string;
  act: Record<string, unknown>;
}) => Promise<string>;

/** What the flow is built from. */
export interface LoginFlowDeps {
  /**
   * The providers people log in through and their group mappings, the flow's short-lived state
   * (`loginSessions`), and `transaction`, where a person is registered.
   */
  store: Pick<Store, "identityProviders" | "externalGroupRoleMappings" | "loginSessions" | "transaction">;
  issuer: Issuer;
  upstream: UpstreamOidc;
  clock: Clock;
  /** The API's public URL: the callback is `<apiUrl>/oauth/callback`, and the default audience. */
  apiUrl: string;
  /** Audiences a login token may be issued for (API and registry URLs). */
  audiences: readonly string[];
  defaultProvider?: DefaultLoginProvider | undefined;
  issueRefreshToken?: RefreshTokenIssuer | undefined;
}

/**
 * The browser login: authorization code + PKCE through an organization's identity provider or the
 * server's default one, then a one-time code the CLI redeems with its own PKCE verifier.
 *
 * 1. `start`: the CLI sends the browser to `/oauth?redirect=<loopback callback>&code_challenge=…`
 *    (or the web console, with its own `/login/callback` as the redirect);
 *    Wharf remembers the login and redirects to the provider (its own state, nonce and PKCE pair).
 * 2. `callback`: the provider redirects back; Wharf redeems the code, verifies the ID token
 *    (issuer, client audience, nonce), registers the person on first login (default role of an
 *    organization provider), resolves external group mappings, and redirects the browser to the
 *    CLI's loopback callback with a one-time code.
 * 3. `redeem`: the CLI posts the code and its verifier to `/oauth/token` and gets a 1 h token; a
 *    refresh token too unless group mappings granted anything (those sessions end with the token).
 */
export function createLoginFlow(deps: LoginFlowDeps) {
  const { store, clock } = deps;
  const callbackUrl = `${deps.apiUrl}${CALLBACK_PATH}`;

  /** Redeems the provider's code, registers the person, and stores the one-time code for the CLI. */
  async function finishLogin(pending: PendingAuthorization, authorizationCode: string): Promise<string> {
    const provider = await resolveLoginProvider(
      pending.provider,
      store.identityProviders,
      deps.defaultProvider,
    );
    const { tokenEndpoint } = await deps.upstream.endpoints(provider.issuer);
    const idToken = await redeemAuthorizationCode({
      tokenEndpoint,
      code: authorizationCode,
      redirectUri: callbackUrl,
      codeVerifier: pending.verifier,
      clientId: provider.clientId,
      clientSecret: provider.clientSecret,
    });
    const claims = await deps.upstream.verifyIdToken(idToken, provider.issuer, provider.clientId);
    if (claims.nonce !== pending.nonce)
      throw permissionDenied("the ID token's nonce does not match this login");
    const person = personOf(claims, provider);
    const { uid } = await registerPerson(store, person, provider, clock.now());
    const sessionGrants = await sessionGrantsOf(store, provider, claims);
    const code = secret();
    const finished: FinishedLogin = {
      identityUid: uid,
      audience: pending.audience,
      challenge: pending.challenge,
      act: { iss: person.issuer, sub: person.subject, aud: provider.clientId },
      sessionGrants,
      refresh: pending.refresh && sessionGrants.length === 0,
    };
    await store.loginSessions.put({
      id: hashOf(code),
      kind: CODE,
      data: JSON.stringify(finished),
      expireTime: clock.now() + CODE_TTL_MS,
    });
    return code;
  }

  return {
    /** Step 1; resolves to the provider's authorization URL. */
    async start(params: {
      redirect: string;
      codeChallenge: string;
      codeChallengeMethod: string;
      identityProvider: string;
      audience: string;
      state: string;
      refresh: boolean;
      /** Passed on to the provider (OIDC `login_hint`), e.g. the email to log in as. */
      loginHint: string;
    }): Promise<string> {
      const redirect = checkLoginRedirect(params.redirect, deps.apiUrl);
      if (params.codeChallengeMethod !== "" && params.codeChallengeMethod !== "S256") {
        throw invalidArgument("code_challenge_method", "only S256 is supported");
      }
      if (!/^[A-Za-z0-9_-]{43}$/.test(params.codeChallenge)) {
        throw invalidArgument("code_challenge", "must be a base64url SHA-256 (43 characters)");
      }
      const audience = params.audience || deps.apiUrl;
      if (!deps.audiences.includes(audience)) {
        throw invalidArgument("audience", `must be one of ${deps.audiences.join(", ")}`);
      }
      const provider = await resolveLoginProvider(
        params.identityProvider,
        store.identityProviders,
        deps.defaultProvider,
      );
      const { authorizationEndpoint } = await deps.upstream.endpoints(provider.issuer);
      // Abandoned logins would pile up: each new login sweeps the expired ones (an index range).
      await store.loginSessions.purgeExpired(clock.now());
      const state = secret();
      const pending: PendingAuthorization = {
        provider: provider.uid,
        redirect,
        clientState: params.state,
        challenge: params.codeChallenge,
        audience,
        nonce: secret(),
        verifier: secret(),
        refresh: params.refresh,
      };
      await store.loginSessions.put({
        id: hashOf(state),
        kind: AUTHORIZATION,
        data: JSON.stringify(pending),
        expireTime: clock.now() + AUTHORIZATION_TTL_MS,
      });
      const url = new URL(authorizationEndpoint);
      url.search = new URLSearchParams({
        response_type: "code",
        client_id: provider.clientId,
        redirect_uri: callbackUrl,
        scope: provider.scopes.join(" "),
        state,
        nonce: pending.nonce,
        code_challenge: s256(pending.verifier),
        code_challenge_method: "S256",
        ...(params.loginHint ? { login_hint: params.loginHint } : {}),
      }).toString();
      return url.toString();
    },

    /**
     * Step 2; resolves to where the browser goes next: the CLI's callback with `code` (or with
     * `error` when the provider refused), always carrying the CLI's own `state`.
     */
    async callback(params: { state: string; code: string; error: string }): Promise<string> {
      if (params.state === "") throw invalidArgument("state", "is required");
      const data = await store.loginSessions.take(hashOf(params.state), AUTHORIZATION, clock.now());
      if (data === undefined) {
        throw invalidArgument("state", "unknown or expired login: start again from `wharf auth login`");
      }
      const pending = JSON.parse(data) as PendingAuthorization;
      const back = new URL(pending.redirect);
      if (pending.clientState !== "") back.searchParams.set("state", pending.clientState);
      if (params.error !== "" || params.code === "") {
        back.searchParams.set("error", params.error || "access_denied");
        return back.toString();
      }
      try {
        back.searchParams.set("code", await finishLogin(pending, params.code));
      } catch (err) {
        // The CLI is waiting on its loopback callback: tell it why, rather than leave it hanging.
        back.searchParams.set("error", "login_failed");
        back.searchParams.set("error_description", isDomainError(err) ? err.message : "internal error");
        if (!isDomainError(err)) throw err;
      }
      return back.toString();
    },

    /** Step 3: the CLI's code and PKCE verifier → tokens. Every failure looks the same. */
    async redeem(params: { code: string; codeVerifier: string }): Promise<LoginTokens> {
      const refused = permissionDenied("unknown, expired or already used login code, or wrong code_verifier");
      if (params.code === "" || params.codeVerifier === "") throw refused;
      const data = await store.loginSessions.take(hashOf(params.code), CODE, clock.now());
      if (data === undefined) throw refused;
      const finished = JSON.parse(data) as FinishedLogin;
      if (s256(params.codeVerifier) !== finished.challenge) throw refused;
      const extraClaims: Record<string, unknown> = { act: finished.act };
      if (finished.sessionGrants.length > 0) extraClaims[SESSION_GRANTS_CLAIM] = finished.sessionGrants;
      const token = await deps.issuer.mint({
        subject: finished.identityUid,
        audience: finished.audience,
        ttlSeconds: LOGIN_TOKEN_TTL_S,
        extraClaims,
      });
      const tokens: LoginTokens = {
        token,
        expiry: new Date(clock.now() + LOGIN_TOKEN_TTL_S * 1000).toISOString(),
      };
      if (finished.refresh && deps.issueRefreshToken) {
        tokens.refreshToken = await deps.issueRefreshToken({
          identityUid: finished.identityUid,
          audience: finished.audience,
          act: finished.act,
        });
      }
      return tokens;
    },
  };
}

/** The person an ID token of `provider` names; PERMISSION_DENIED without a subject. */
export function personOf(claims: Record<string, unknown>, provider: LoginProvider): VerifiedPerson {
  const text = (name: string): string => (typeof claims[name] === "string" ? (claims[name] as string) : "");
  const subject = text("sub");
  if (subject === "") throw permissionDenied("the ID token has no subject");
  const verified = claims.email_verified === true || claims.email_verified === "true";
  return {
    issuer: provider.issuer,
    subject,
    email: verified ? text("email").toLowerCase() : "",
    displayName: text("name") || text("preferred_username"),
  };
}

/**
 * Uids of the provider's mappings for the person's groups (from the provider's groups claim); []
 * for the default provider or a provider without a groups claim.
 */
export async function sessionGrantsOf(
  store: Pick<Store, "externalGroupRoleMappings">,
  provider: LoginProvider,
  claims: Record<string, unknown>,
): Promise<string[]> {
  if (provider.uid === "" || provider.groupsClaim === "") return [];
  const value = claims[provider.groupsClaim];
  const groups = (Array.isArray(value) ? value : typeof value === "string" ? [value] : []).filter(
    (g): g is string => typeof g === "string" && g !== "",
  );
  if (groups.length === 0) return [];
  const mappings = await store.externalGroupRoleMappings.forProvider(provider.uid, groups);
  return mappings.map((m) => m.uid).sort();
}

function secret(): string {
  return randomBytes(32).toString("base64url");
}

function hashOf(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

function s256(verifier: string): string {
  return createHash("sha256").update(verifier).digest("base64url");
}
