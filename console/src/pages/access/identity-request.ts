import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, type iam, WharfApiError } from "wharf/sdk";

/** How tokens of another issuer may assume the identity (the API requires exactly one). */
export type IdentityKind = "claimMatch" | "staticKeys";

/** The identity form as typed: every field a string (or the kind). */
export interface IdentityDraft {
  name: string;
  description: string;
  kind: IdentityKind;
  /** claimMatch: each pair needs exactly one of the exact value or the (anchored) pattern. */
  issuer: string;
  issuerPattern: string;
  subject: string;
  subjectPattern: string;
  audience: string;
  audiencePattern: string;
  /** staticKeys: the issuer and subject of the tokens, the JWKS (JSON text), expiry and audience. */
  keysIssuer: string;
  keysSubject: string;
  issuerKeys: string;
  /** An `<input type="datetime-local">` value (local time); empty = none. */
  expiration: string;
  keysAudience: string;
}

/** An empty draft of `kind`. */
export function emptyIdentityDraft(kind: IdentityKind = "claimMatch"): IdentityDraft {
  return {
    name: "",
    description: "",
    kind,
    issuer: "",
    issuerPattern: "",
    subject: "",
    subjectPattern: "",
    audience: "",
    audiencePattern: "",
    keysIssuer: "",
    keysSubject: "",
    issuerKeys: "",
    expiration: "",
    keysAudience: "",
  };
}

/**
 * The CreateIdentity request of `draft` under `parent`: values trimmed, only the chosen kind's
 * fields sent, empty optional fields left out. A malformed expiration throws INVALID_ARGUMENT
 * naming `static_keys.expiration_time`, like the server would, so the form shows it beside the
 * field. Everything else is the server's to judge.
 */
export function identityRequest(
  parent: string,
  draft: IdentityDraft,
): MessageInitShape<typeof iam.CreateIdentityRequestSchema> {
  const base = { name: draft.name.trim(), description: draft.description.trim() };
  if (draft.kind === "claimMatch") {
    return {
      parent,
      identity: {
        ...base,
        relationship: {
          case: "claimMatch",
          value: {
            issuer: draft.issuer.trim(),
            issuerPattern: draft.issuerPattern.trim(),
            subject: draft.subject.trim(),
            subjectPattern: draft.subjectPattern.trim(),
            audience: draft.audience.trim(),
            audiencePattern: draft.audiencePattern.trim(),
          },
        },
      },
    };
  }
  const expiration = draft.expiration.trim();
  const expiry = expiration === "" ? undefined : new Date(expiration);
  if (expiry && Number.isNaN(expiry.getTime())) {
    throw new WharfApiError({
      code: Code.InvalidArgument,
      message: "invalid identity",
      fieldViolations: [{ field: "static_keys.expiration_time", description: "must be a date and time" }],
    });
  }
  const audience = draft.keysAudience.trim();
  return {
    parent,
    identity: {
      ...base,
      relationship: {
        case: "staticKeys",
        value: {
          issuer: draft.keysIssuer.trim(),
          subject: draft.keysSubject.trim(),
          issuerKeys: draft.issuerKeys.trim(),
          ...(expiry ? { expirationTime: timestampFromDate(expiry) } : {}),
          audiences: audience === "" ? [] : [audience],
        },
      },
    },
  };
}
