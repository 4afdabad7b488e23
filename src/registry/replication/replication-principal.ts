import type { Principal } from "../../core/context.js";
import type { ReplicationRuleConfig } from "./replication-contract.js";

/**
 * Who writes what a replication copies into Wharf (ADR 0055): not a person, the rule. Its
 * identity uid is the rule's uid, so push events, `repo.created` and `group.created` events, and
 * quota notices name the rule in `actor.subject`; `act` says it was replication, and which rule by
 * name, for readers that do not look the uid up. It holds no capabilities: the rule was authorized
 * when it was created (`replication.create` on the organization), and the copier writes only
 * under the rule's organization.
 */
export function replicationPrincipal(rule: Pick<ReplicationRuleConfig, "uid" | "name">): Principal {
  return {
    identityUid: rule.uid,
    isAdmin: false,
    claims: { sub: rule.uid, act: { sub: "wharf-replication", rule: rule.name } },
  };
}

/** The user agent push events report for content a rule wrote. */
export function replicationUserAgent(rule: Pick<ReplicationRuleConfig, "uid">): string {
  return `wharf-replication (rule ${rule.uid})`;
}
