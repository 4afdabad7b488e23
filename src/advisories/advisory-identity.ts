import { createHash } from "node:crypto";
import { deterministicRootUid } from "../core/uidp.js";

/** The CGA id alphabet (chainguard-dev/advisory-schema `cga_id.go`): no look-alike characters. */
const ALPHABET = "23456789cfghjmpqrvwx";
const GROUP = `[${ALPHABET}]{4}`;
/** Prefix of the advisory ids Wharf derives for records whose own id is not CGA-shaped (ADR 0025). */
export const DERIVED_ID_PREFIX = "WGA";

// Only these prefixes: GHSA ids have the very same shape and alphabet, but name upstream
// vulnerabilities (aliases), not a distributor's advisory.
const ADVISORY_ID = new RegExp(`^(?:CGA|${DERIVED_ID_PREFIX})-${GROUP}-${GROUP}-${GROUP}$`);

/** True for an advisory id: `CGA-xxxx-xxxx-xxxx` or `WGA-xxxx-xxxx-xxxx` over the CGA alphabet. */
export function isAdvisoryIdShaped(id: string): boolean {
  return ADVISORY_ID.test(id);
}

/**
 * A stable `WGA-xxxx-xxxx-xxxx` id for a source record id that is not CGA-shaped: twelve alphabet
 * characters taken from sha256(`namespace|package|sourceId`), so the same record of the same package
 * gets the same id on every import.
 */
export function deriveAdvisoryId(namespace: string, packageName: string, sourceId: string): string {
  const digest = createHash("sha256").update(`${namespace}|${packageName}|${sourceId}`).digest();
  let chars = "";
  for (let i = 0; i < 12; i++) chars += ALPHABET[(digest[i] ?? 0) % ALPHABET.length];
  return `${DERIVED_ID_PREFIX}-${chars.slice(0, 4)}-${chars.slice(4, 8)}-${chars.slice(8, 12)}`;
}

/** `{advisoryId, legacyAdvisoryId}` of a source id: kept when CGA-shaped, else derived. */
export function advisoryIdsOf(
  namespace: string,
  packageName: string,
  sourceId: string,
): { advisoryId: string; legacyAdvisoryId: string } {
  if (isAdvisoryIdShaped(sourceId)) return { advisoryId: sourceId, legacyAdvisoryId: "" };
  return { advisoryId: deriveAdvisoryId(namespace, packageName, sourceId), legacyAdvisoryId: sourceId };
}

/** The advisory's uid: sha1 hex of `wharf:advisory:<advisoryId>/<artifactName>`. */
export function advisoryUid(advisoryId: string, artifactName: string): string {
  return deterministicRootUid(`wharf:advisory:${advisoryId}/${artifactName}`);
}

/**
 * An event's uid under its advisory: 16 hex of sha1(time|type|position), so re-importing the same
 * history gives the same uids and a changed history gives new ones.
 */
export function advisoryEventUid(advisoryUid: string, time: number, type: string, index: number): string {
  const hex = createHash("sha1").update(`${time}|${type}|${index}`).digest("hex").slice(0, 16);
  return `${advisoryUid}/${hex}`;
}
