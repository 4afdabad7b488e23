import { toTimestamp } from "../../../core/api-convert.js";
import { invalidArgument } from "../../../core/errors.js";
import { isUidp } from "../../../core/uidp.js";
import {
  type Policy,
  Policy_Mode,
  Policy_Severity,
  type PolicyViolation as PolicyViolationMessage,
} from "../../../gen/platform/registry/v2/policies_pb.js";
import type { PolicySeverity, PullPolicyMode, PullPolicyRow } from "../../../storage/pull-policy-store.js";
import type { Store } from "../../../storage/store.js";
import type { PolicyViolation } from "./pull-policies.js";

/** A policy's name: 1 to 63 of [a-z0-9._-], starting with a letter or digit. */
const POLICY_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;
/** Most exempt identities one policy lists. */
export const MAX_EXEMPT_IDENTITIES = 100;

const MODES: Record<PullPolicyMode, Policy_Mode> = { ENFORCE: Policy_Mode.ENFORCE, WARN: Policy_Mode.WARN };
const SEVERITIES: Record<PolicySeverity, Policy_Severity> = {
  "": Policy_Severity.SEVERITY_UNSPECIFIED,
  LOW: Policy_Severity.LOW,
  MEDIUM: Policy_Severity.MEDIUM,
  HIGH: Policy_Severity.HIGH,
  CRITICAL: Policy_Severity.CRITICAL,
};

/** The API message of a stored policy. */
export function policyMessage(row: PullPolicyRow): Policy {
  return {
    $typeName: "platform.registry.v2.Policy",
    uid: row.uid,
    name: row.name,
    mode: MODES[row.mode],
    requireSignature: row.requireSignature,
    denySeverity: SEVERITIES[row.denySeverity],
    onlyFixable: row.onlyFixable,
    denyEol: row.denyEol,
    requireSbom: row.requireSbom,
    exemptIdentities: [...row.exemptIdentities],
    createTime: toTimestamp(row.createTime),
    updateTime: toTimestamp(row.updateTime),
  };
}

/** The API message of one violation. */
export function violationMessage(v: PolicyViolation): PolicyViolationMessage {
  return {
    $typeName: "platform.registry.v2.PolicyViolation",
    policy: v.policy,
    rule: v.rule,
    detail: v.detail,
    mode: MODES[v.mode],
    policyUid: v.policyUid,
  };
}

/** INVALID_ARGUMENT on `name` unless it follows the policy name rule. */
export function validatePolicyName(name: string): string {
  if (!POLICY_NAME.test(name)) {
    throw invalidArgument(
      "name",
      `name must be 1 to 63 of a-z, 0-9, ".", "_", "-", starting with a letter or digit (got "${name.slice(0, 80)}")`,
    );
  }
  return name;
}

/** The stored mode of `mode`; INVALID_ARGUMENT on `mode` when unset or unknown. */
export function modeOf(mode: Policy_Mode): PullPolicyMode {
  if (mode === Policy_Mode.ENFORCE) return "ENFORCE";
  if (mode === Policy_Mode.WARN) return "WARN";
  throw invalidArgument("mode", "mode is required: ENFORCE or WARN");
}

/** The stored severity of `severity` ("" when unset); INVALID_ARGUMENT on `deny_severity` when unknown. */
export function severityOf(severity: Policy_Severity): PolicySeverity {
  for (const [stored, value] of Object.entries(SEVERITIES)) {
    if (value === severity) return stored as PolicySeverity;
  }
  throw invalidArgument("deny_severity", "deny_severity must be LOW, MEDIUM, HIGH or CRITICAL");
}

/** The rules of a policy to be stored: at least one on, and only_fixable only with deny_severity. */
export function validateRules(row: PullPolicyRow): void {
  if (row.onlyFixable && row.denySeverity === "") {
    throw invalidArgument("only_fixable", "only_fixable needs deny_severity");
  }
  if (!row.requireSignature && row.denySeverity === "" && !row.denyEol && !row.requireSbom) {
    throw invalidArgument(
      "require_signature",
      "a policy needs at least one rule: require_signature, deny_severity, deny_eol or require_sbom",
    );
  }
}

/**
 * `identities` deduplicated, each a uid of an existing identity (read in one query of `store`);
 * INVALID_ARGUMENT on `exempt_identities[i]` naming the first that is not.
 */
export async function validateExemptIdentities(
  store: Pick<Store, "identities">,
  identities: readonly string[],
): Promise<string[]> {
  if (identities.length > MAX_EXEMPT_IDENTITIES) {
    throw invalidArgument("exempt_identities", `at most ${MAX_EXEMPT_IDENTITIES} identities`);
  }
  identities.forEach((uid, i) => {
    if (!isUidp(uid))
      throw invalidArgument(`exempt_identities[${i}]`, `"${uid.slice(0, 80)}" is not an identity uid`);
  });
  const unique = [...new Set(identities)];
  const found = new Set((await store.identities.getMany(unique)).map((row) => row.uid));
  identities.forEach((uid, i) => {
    if (!found.has(uid)) throw invalidArgument(`exempt_identities[${i}]`, `no identity ${uid}`);
  });
  return unique;
}
