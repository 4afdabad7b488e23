import type { MessageInitShape } from "@bufbuild/protobuf";
import { iam } from "wharf/sdk";

/** The identity provider form as typed. */
export interface IdentityProviderDraft {
  name: string;
  description: string;
  /** The uid of the role people get at the group on their first login. */
  defaultRole: string;
  issuer: string;
  clientId: string;
  /** Write-only: sent once, never shown again (the server never returns it). */
  clientSecret: string;
  /** Space- or comma-separated scopes besides `openid`. */
  additionalScopes: string;
  groupsClaim: string;
  pkceEnabled: boolean;
  correlation: "sub" | "oid";
}

/** An empty draft. */
export function emptyIdentityProviderDraft(): IdentityProviderDraft {
  return {
    name: "",
    description: "",
    defaultRole: "",
    issuer: "",
    clientId: "",
    clientSecret: "",
    additionalScopes: "",
    groupsClaim: "",
    pkceEnabled: false,
    correlation: "sub",
  };
}

/**
 * The CreateIdentityProvider request of `draft` under `parent`: values trimmed, scopes split on
 * spaces and commas, the client secret left out when empty (a PKCE client has none).
 */
export function identityProviderRequest(
  parent: string,
  draft: IdentityProviderDraft,
): MessageInitShape<typeof iam.CreateIdentityProviderRequestSchema> {
  const secret = draft.clientSecret.trim();
  return {
    parent,
    identityProvider: {
      name: draft.name.trim(),
      description: draft.description.trim(),
      defaultRole: draft.defaultRole,
      configuration: {
        case: "oidc",
        value: {
          issuer: draft.issuer.trim(),
          clientId: draft.clientId.trim(),
          ...(secret === "" ? {} : { clientSecret: secret }),
          additionalScopes: draft.additionalScopes.split(/[\s,]+/).filter((s) => s !== ""),
          groupsClaim: draft.groupsClaim.trim(),
          pkceEnabled: draft.pkceEnabled,
          correlationRule:
            draft.correlation === "oid"
              ? iam.IdentityProvider_CorrelationRule.OID_EQUALS_EXTERNAL_ID
              : iam.IdentityProvider_CorrelationRule.SUB_EQUALS_EXTERNAL_ID,
        },
      },
    },
  };
}
