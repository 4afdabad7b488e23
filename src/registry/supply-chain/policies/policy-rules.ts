import { utcDayName } from "../../../core/utc-day.js";
import type { EolCycleRow } from "../../../storage/eol-store.js";
import type { PolicySeverity, PullPolicyRow } from "../../../storage/pull-policy-store.js";
import type { ImageFinding, SignatureCheck, TrustedKey } from "../supply-chain.js";

/** A policy rule's name, as violations name it (the Policy field). */
export type PolicyRule = "requireSignature" | "denySeverity" | "denyEol" | "requireSbom";

/** Severities in increasing order; a finding at or above a policy's `denySeverity` fails it. */
const SEVERITY_RANK: Record<string, number> = {
  UNKNOWN: 0,
  NEGLIGIBLE: 0,
  LOW: 1,
  MEDIUM: 2,
  HIGH: 3,
  CRITICAL: 4,
};

/** How many findings a message names before "and N more". */
const MAX_NAMED_FINDINGS = 3;

/** The EOL facts of one tag an EOL rule covers that is INACTIVE. */
export interface InactiveTag {
  tag: string;
  product: string;
  cycle?: EolCycleRow;
  /** EOL date plus the grace period; absent when the cycle is declared EOL without a date. */
  graceEnd?: number;
}

/**
 * What the rules read about one image. Each fact is undefined when no applicable policy needs it
 * (it was not gathered). Facts already include what the image's indexes in the repo contribute
 * (see image-facts.ts).
 */
export interface ImageFacts {
  /** The image's signatures (and those of an index listing it, when it has no verified one). */
  signatures?: readonly SignatureCheck[];
  /** The keys trusted for the repo, nearest first (for the message). */
  keys?: readonly TrustedKey[];
  /** Unsuppressed findings; null: no report at all. */
  findings?: readonly ImageFinding[] | null;
  /** INACTIVE tags naming the image (or an index listing it). */
  inactiveTags?: readonly InactiveTag[];
  hasSbom?: boolean;
}

/** Everything a policy's rules need besides the facts, for messages a person can act on. */
export interface RuleContext {
  /** The repository path (`acme/prod/api`). */
  repository: string;
  digest: string;
}

/** One failed rule of one policy. */
export interface RuleViolation {
  rule: PolicyRule;
  detail: string;
}

/** Which facts a policy needs gathered. */
export function factsNeeded(policy: PullPolicyRow): Set<keyof ImageFacts> {
  const needed = new Set<keyof ImageFacts>();
  if (policy.requireSignature) needed.add("signatures").add("keys");
  if (policy.denySeverity !== "") needed.add("findings");
  if (policy.denyEol) needed.add("inactiveTags");
  if (policy.requireSbom) needed.add("hasSbom");
  return needed;
}

/**
 * Whether `check` counts for `requireSignature`: verified by a registered key. A keyless Sigstore
 * bundle verified against `--sigstore-trusted-root` names no key (`keyUid` ""): anyone the root's
 * certificate authority issued to could have made it, so it does not count (ADR 0058).
 */
export function signedByTrustedKey(check: SignatureCheck): boolean {
  return check.verified && check.keyUid !== "";
}

/** The failed rules of `policy` for an image with `facts`, in the order of the Policy's fields. */
export function violationsOf(
  policy: PullPolicyRow,
  facts: ImageFacts,
  context: RuleContext,
): RuleViolation[] {
  const out: RuleViolation[] = [];
  if (policy.requireSignature && !(facts.signatures ?? []).some(signedByTrustedKey)) {
    out.push({ rule: "requireSignature", detail: unsignedDetail(facts, context) });
  }
  if (policy.denySeverity !== "" && facts.findings) {
    const denied = deniedFindings(facts.findings, policy.denySeverity, policy.onlyFixable);
    if (denied.length > 0) out.push({ rule: "denySeverity", detail: findingsDetail(denied) });
  }
  if (policy.denyEol && facts.inactiveTags && facts.inactiveTags.length > 0) {
    out.push({ rule: "denyEol", detail: eolDetail(facts.inactiveTags) });
  }
  if (policy.requireSbom && facts.hasSbom === false) {
    out.push({
      rule: "requireSbom",
      detail: `no SBOM attached (attach an SPDX or CycloneDX SBOM as a referrer, e.g. cosign attest --type spdxjson --predicate sbom.spdx.json ${context.repository}@${context.digest}, or oras attach --artifact-type application/spdx+json ${context.repository}@${context.digest} sbom.spdx.json)`,
    });
  }
  return out;
}

/** The findings at or above `floor` (only fixable ones with `onlyFixable`), most severe first. */
export function deniedFindings(
  findings: readonly ImageFinding[],
  floor: Exclude<PolicySeverity, "">,
  onlyFixable: boolean,
): ImageFinding[] {
  const min = SEVERITY_RANK[floor] ?? 5;
  return findings
    .filter((f) => (SEVERITY_RANK[f.severity.toUpperCase()] ?? 0) >= min && (!onlyFixable || f.fixable))
    .sort(
      (a, b) =>
        (SEVERITY_RANK[b.severity.toUpperCase()] ?? 0) - (SEVERITY_RANK[a.severity.toUpperCase()] ?? 0) ||
        (a.vulnerabilityId < b.vulnerabilityId ? -1 : a.vulnerabilityId > b.vulnerabilityId ? 1 : 0),
    );
}

function unsignedDetail(facts: ImageFacts, context: RuleContext): string {
  const keys = facts.keys ?? [];
  const failed = (facts.signatures ?? []).filter((s) => !s.verified);
  const seen =
    failed.length > 0 ? ` (${failed.length} signature(s) found, none verified: ${failed[0]?.reason})` : "";
  const image = `${context.repository}@${context.digest}`;
  if (keys.length === 0) {
    return `not signed by a trusted key${seen}: no signing key is registered at ${context.repository} or its parents (register a public key as a SigningKey, then cosign sign --key <its private key> ${image})`;
  }
  const nearest = keys[0]?.parentPath ?? context.repository;
  const names = keys.map((k) => `${k.name} (${k.parentPath})`).join(", ");
  return `not signed by a key trusted at ${nearest}${seen}: sign with one of ${names}, e.g. cosign sign --key <private key of ${keys[0]?.name}> ${image}`;
}

function findingsDetail(denied: readonly ImageFinding[]): string {
  const named = denied.slice(0, MAX_NAMED_FINDINGS).map((f) => {
    const where = `${f.packageName} ${f.packageVersion}`.trim();
    const fix = f.fixable
      ? `fixable in ${where}${f.fixedVersion ? ` (fixed in ${f.fixedVersion})` : ""}`
      : `in ${where}`;
    return `${f.vulnerabilityId} ${f.severity.toUpperCase()} ${fix}`;
  });
  const more = denied.length > MAX_NAMED_FINDINGS ? ` and ${denied.length - MAX_NAMED_FINDINGS} more` : "";
  return `${named.join(", ")}${more} (update the packages and push a new image, or upload a VEX statement if it does not affect the image)`;
}

function eolDetail(tags: readonly InactiveTag[]): string {
  const parts = tags.map((t) => {
    const what = `${t.product} ${t.cycle?.cycle ?? ""}`.trim();
    if (t.cycle?.eolDate === undefined) return `tag ${t.tag}: ${what} is declared end of life`;
    return `tag ${t.tag}: ${what} ended ${utcDayName(t.cycle.eolDate)}, grace ended ${t.graceEnd === undefined ? "" : utcDayName(t.graceEnd)}`;
  });
  return `end of life (${parts.join("; ")}; move to a supported release)`;
}
