import { failedPrecondition, invalidArgument, notFound } from "../core/errors.js";
import { isUidp } from "../core/uidp.js";
import type { IdentityProviderStore } from "../storage/iam-store.js";

/** The server's own login provider (`wharf serve --login-issuer …`), used when no org provider is named. */
export interface DefaultLoginProvider {
  issuer: string;
  clientId: string;
  /** "" for a public client (PKCE only). */
  clientSecret: string;
  additionalScopes: readonly string[];
}

/** Everything the flow needs of the provider a person logs in through. */
export interface LoginProvider {
  /** The organization provider's uid, or "" for the server's default provider. */
  uid: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  /** ID-token claim listing the person's groups at the provider; "" = no group mappings. */
  groupsClaim: string;
  /** Uid of the role bound at `groupUid` on a person's first login; "" for the default provider. */
  defaultRole: string;
  /** The organization of the provider; "" for the default provider. */
  groupUid: string;
}

/** `openid` first, then the extra scopes, without duplicates. */
function scopesOf(additional: readonly string[]): string[] {
  return [...new Set(["openid", "email", "profile", ...additional])];
}

/**
 * Resolves the provider of a login: the organization provider `uid` when given (NOT_FOUND when it
 * does not exist), else the server's default provider (FAILED_PRECONDITION when none is configured).
 */
export async function resolveLoginProvider(
  uid: string,
  providers: Pick<IdentityProviderStore, "get">,
  fallback: DefaultLoginProvider | undefined,
): Promise<LoginProvider> {
  if (uid === "") {
    if (!fallback) {
      throw failedPrecondition(
        "NO_LOGIN_PROVIDER",
        "this server has no default login provider: name an organization's identity_provider",
      );
    }
    return {
      uid: "",
      issuer: fallback.issuer,
      clientId: fallback.clientId,
      clientSecret: fallback.clientSecret,
      scopes: scopesOf(fallback.additionalScopes),
      groupsClaim: "",
      defaultRole: "",
      groupUid: "",
    };
  }
  if (!isUidp(uid)) throw invalidArgument("identity_provider", "must be an identity provider uid");
  const row = await providers.get(uid);
  if (!row) throw notFound("identity provider", uid);
  return {
    uid: row.uid,
    issuer: row.oidc.issuer,
    clientId: row.oidc.clientId,
    clientSecret: row.oidc.clientSecret,
    scopes: scopesOf(row.oidc.additionalScopes),
    groupsClaim: row.oidc.groupsClaim,
    defaultRole: row.defaultRole,
    groupUid: row.groupUid,
  };
}
