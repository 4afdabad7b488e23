import { create } from "@bufbuild/protobuf";
import { fromTimestamp, toTimestamp } from "../core/api-convert.js";
import { invalidArgument } from "../core/errors.js";
import { compilePattern } from "../core/validation.js";
import {
  type ClaimMatch,
  ClaimMatchSchema,
  type Identity,
  IdentitySchema,
  type StaticKeys,
  StaticKeysSchema,
} from "../gen/platform/iam/v2/identities_pb.js";
import type { ClaimMatchData, IdentityRow, StaticKeysData } from "../storage/iam-store.js";

/** Static-key identities expire after this unless an expiration is given. */
export const DEFAULT_STATIC_KEYS_LIFETIME_MS = 365 * 24 * 60 * 60 * 1000;

/** The API message of a stored identity. */
export function identityMessage(row: IdentityRow): Identity {
  const msg = create(IdentitySchema, {
    uid: row.uid,
    name: row.name,
    description: row.description,
    email: row.email,
    lastSeenTime: toTimestamp(row.lastSeenTime),
    createTime: toTimestamp(row.createTime),
    updateTime: toTimestamp(row.updateTime),
  });
  if (row.claimMatch) {
    msg.relationship = { case: "claimMatch", value: create(ClaimMatchSchema, row.claimMatch) };
  } else if (row.staticKeys) {
    const { expirationTime, ...rest } = row.staticKeys;
    msg.relationship = {
      case: "staticKeys",
      value: create(StaticKeysSchema, { ...rest, expirationTime: toTimestamp(expirationTime) }),
    };
  }
  return msg;
}

/**
 * Validates and converts a claimMatch: issuer or issuerPattern, and subject or subjectPattern, are
 * required (exactly one of each pair); patterns must compile. Errors name `claim_match.<field>`.
 */
export function claimMatchData(input: ClaimMatch): ClaimMatchData {
  const pair = (exact: string, pattern: string, name: string) => {
    if ((exact === "") === (pattern === "")) {
      throw invalidArgument(`claim_match.${name}`, `exactly one of ${name} or ${name}_pattern is required`);
    }
    if (pattern !== "") compilePattern(pattern, `claim_match.${name}_pattern`);
  };
  pair(input.issuer, input.issuerPattern, "issuer");
  if (input.issuer !== "" && !isHttpUrl(input.issuer)) {
    throw invalidArgument("claim_match.issuer", "must be the issuer's http(s) URL");
  }
  pair(input.subject, input.subjectPattern, "subject");
  if (input.audience !== "" && input.audiencePattern !== "") {
    throw invalidArgument("claim_match.audience", "at most one of audience or audience_pattern may be set");
  }
  if (input.audiencePattern !== "") compilePattern(input.audiencePattern, "claim_match.audience_pattern");
  for (const [claim, pattern] of Object.entries(input.claimPatterns)) {
    compilePattern(pattern, `claim_match.claim_patterns.${claim}`);
  }
  const out: ClaimMatchData = {};
  if (input.issuer) out.issuer = input.issuer;
  if (input.issuerPattern) out.issuerPattern = input.issuerPattern;
  if (input.subject) out.subject = input.subject;
  if (input.subjectPattern) out.subjectPattern = input.subjectPattern;
  if (input.audience) out.audience = input.audience;
  if (input.audiencePattern) out.audiencePattern = input.audiencePattern;
  if (Object.keys(input.claims).length > 0) out.claims = { ...input.claims };
  if (Object.keys(input.claimPatterns).length > 0) out.claimPatterns = { ...input.claimPatterns };
  return out;
}

/**
 * Validates and converts staticKeys: issuer, subject and issuerKeys (a JWKS JSON document with at
 * least one key) are required; at most one audience; the expiration defaults to a year from `now`
 * and must be in the future.
 */
export function staticKeysData(input: StaticKeys, now: number): StaticKeysData {
  if (input.issuer === "") throw invalidArgument("static_keys.issuer", "is required");
  if (input.subject === "") throw invalidArgument("static_keys.subject", "is required");
  let jwks: unknown;
  try {
    jwks = JSON.parse(input.issuerKeys);
  } catch {
    throw invalidArgument("static_keys.issuer_keys", "must be a JWKS JSON document");
  }
  const keys = (jwks as { keys?: unknown }).keys;
  if (!Array.isArray(keys) || keys.length === 0) {
    throw invalidArgument("static_keys.issuer_keys", 'must be a JWKS with a non-empty "keys" array');
  }
  if (input.audiences.length > 1) throw invalidArgument("static_keys.audiences", "at most one audience");
  const expirationTime = fromTimestamp(input.expirationTime) ?? now + DEFAULT_STATIC_KEYS_LIFETIME_MS;
  if (expirationTime <= now) throw invalidArgument("static_keys.expiration_time", "must be in the future");
  return {
    issuer: input.issuer,
    subject: input.subject,
    issuerKeys: input.issuerKeys,
    expirationTime,
    ...(input.audiences.length > 0 ? { audiences: [...input.audiences] } : {}),
  };
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "https:" || url.protocol === "http:";
  } catch {
    return false;
  }
}
