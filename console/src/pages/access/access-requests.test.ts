import { timestampDate } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { iam, isWharfApiError } from "wharf/sdk";
import { emptyIdentityProviderDraft, identityProviderRequest } from "./identity-provider-request";
import { emptyIdentityDraft, identityRequest } from "./identity-request";

const GROUP = "0123456789abcdef0123456789abcdef01234567";

describe("identityRequest", () => {
  it("sends a claimMatch identity's fields trimmed, and nothing of the static keys", () => {
    const request = identityRequest(GROUP, {
      ...emptyIdentityDraft("claimMatch"),
      name: " ci ",
      issuer: " https://token.actions.githubusercontent.com ",
      subjectPattern: "repo:acme/.*",
      audience: "wharf",
      keysIssuer: "ignored",
    });
    expect(request).toEqual({
      parent: GROUP,
      identity: {
        name: "ci",
        description: "",
        relationship: {
          case: "claimMatch",
          value: {
            issuer: "https://token.actions.githubusercontent.com",
            issuerPattern: "",
            subject: "",
            subjectPattern: "repo:acme/.*",
            audience: "wharf",
            audiencePattern: "",
          },
        },
      },
    });
  });

  it("sends static keys with the expiration as a timestamp and the audience as a one-item list", () => {
    const request = identityRequest(GROUP, {
      ...emptyIdentityDraft("staticKeys"),
      name: "partner",
      keysIssuer: "https://partner.example",
      keysSubject: "robot",
      issuerKeys: ' {"keys":[]} ',
      expiration: "2031-05-06T07:08",
      keysAudience: "https://registry.example",
      issuer: "ignored",
    });
    const relationship = request.identity?.relationship;
    expect(relationship?.case).toBe("staticKeys");
    const keys = relationship?.case === "staticKeys" ? relationship.value : undefined;
    expect(keys?.issuer).toBe("https://partner.example");
    expect(keys?.subject).toBe("robot");
    expect(keys?.issuerKeys).toBe('{"keys":[]}');
    expect(keys?.audiences).toEqual(["https://registry.example"]);
    const expiry = keys?.expirationTime;
    expect(expiry && "seconds" in expiry ? timestampDate(expiry as never).getTime() : 0).toBe(
      new Date("2031-05-06T07:08").getTime(),
    );
  });

  it("leaves out an empty expiration and audience, and refuses an unreadable date beside its field", () => {
    const request = identityRequest(GROUP, { ...emptyIdentityDraft("staticKeys"), name: "x" });
    const keys = request.identity?.relationship?.value as Record<string, unknown>;
    expect(keys.expirationTime).toBeUndefined();
    expect(keys.audiences).toEqual([]);
    let thrown: unknown;
    try {
      identityRequest(GROUP, { ...emptyIdentityDraft("staticKeys"), expiration: "next tuesday" });
    } catch (err) {
      thrown = err;
    }
    expect(isWharfApiError(thrown) && thrown.fieldViolations).toEqual([
      { field: "static_keys.expiration_time", description: "must be a date and time" },
    ]);
  });
});

describe("identityProviderRequest", () => {
  it("splits the scopes, keeps the secret write-only input as given, and maps the correlation rule", () => {
    const request = identityProviderRequest(GROUP, {
      ...emptyIdentityProviderDraft(),
      name: " corp-sso ",
      defaultRole: "role-uid",
      issuer: "https://login.example ",
      clientId: "wharf",
      clientSecret: " s3cret ",
      additionalScopes: "profile, email  groups",
      groupsClaim: "groups",
      correlation: "oid",
    });
    expect(request.identityProvider?.name).toBe("corp-sso");
    expect(request.identityProvider?.defaultRole).toBe("role-uid");
    expect(request.identityProvider?.configuration).toEqual({
      case: "oidc",
      value: {
        issuer: "https://login.example",
        clientId: "wharf",
        clientSecret: "s3cret",
        additionalScopes: ["profile", "email", "groups"],
        groupsClaim: "groups",
        pkceEnabled: false,
        correlationRule: iam.IdentityProvider_CorrelationRule.OID_EQUALS_EXTERNAL_ID,
      },
    });
  });

  it("sends no secret for a PKCE client", () => {
    const request = identityProviderRequest(GROUP, { ...emptyIdentityProviderDraft(), pkceEnabled: true });
    const oidc = request.identityProvider?.configuration?.value as Record<string, unknown>;
    expect("clientSecret" in oidc).toBe(false);
    expect(oidc.pkceEnabled).toBe(true);
    expect(oidc.additionalScopes).toEqual([]);
    expect(oidc.correlationRule).toBe(iam.IdentityProvider_CorrelationRule.SUB_EQUALS_EXTERNAL_ID);
  });
});
