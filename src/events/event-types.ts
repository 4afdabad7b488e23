/**
 * The CloudEvents types Wharf emits (ADR 0012). API changes are
 * `dev.wharf.api.<domain>.<resource>.<verb>.v1`, with the resource names of the hosted service's
 * events (`iam.roles`, `iam.rolebindings`, …) so receivers written for it only swap the prefix;
 * the registry data plane emits `dev.wharf.registry.push.v1` and `dev.wharf.registry.pull.v1`.
 */

/** Every resource whose changes are events: its type stem and the API collection (`ce-source` path). */
export const EVENT_RESOURCES = {
  group: { stem: "dev.wharf.api.iam.group", collection: "/iam/v2/groups" },
  identity: { stem: "dev.wharf.api.iam.identity", collection: "/iam/v2/identities" },
  role: { stem: "dev.wharf.api.iam.roles", collection: "/iam/v2/roles" },
  roleBinding: { stem: "dev.wharf.api.iam.rolebindings", collection: "/iam/v2/roleBindings" },
  identityProvider: { stem: "dev.wharf.api.iam.identity_providers", collection: "/iam/v2/identityProviders" },
  accountAssociation: {
    stem: "dev.wharf.api.iam.account_associations",
    collection: "/iam/v2/accountAssociations",
  },
  groupInvite: { stem: "dev.wharf.api.iam.group_invite", collection: "/iam/v2/groupInvites" },
  externalGroupRoleMapping: {
    stem: "dev.wharf.api.iam.external_group_role_mappings",
    collection: "/iam/v2/externalGroupRoleMappings",
  },
  terms: { stem: "dev.wharf.api.iam.terms", collection: "/iam/v2/terms" },
  subscription: { stem: "dev.wharf.api.events.subscription", collection: "/events/v2/subscriptions" },
  delivery: { stem: "dev.wharf.api.events.delivery", collection: "/events/v2/deliveries" },
  repo: { stem: "dev.wharf.api.registry.repo", collection: "/registry/v2/repos" },
  tag: { stem: "dev.wharf.api.registry.tag", collection: "/registry/v2/tags" },
  immutabilityRule: {
    stem: "dev.wharf.api.registry.immutability_rule",
    collection: "/registry/v2/immutabilityRules",
  },
  retentionPolicy: {
    stem: "dev.wharf.api.registry.retention_policy",
    collection: "/registry/v2/retentionPolicies",
  },
  replicationRule: {
    stem: "dev.wharf.api.registry.replication_rule",
    collection: "/registry/v2/replicationRules",
  },
  replicationRun: {
    stem: "dev.wharf.api.registry.replication_run",
    collection: "/registry/v2/replicationRuns",
  },
  vulnReport: { stem: "dev.wharf.api.registry.vuln_report", collection: "/registry/v1/vuln_reports" },
  vex: { stem: "dev.wharf.api.registry.vex", collection: "/registry/v1/vex" },
  quota: { stem: "dev.wharf.api.registry.quota", collection: "/registry/v2/quotas" },
  upstream: { stem: "dev.wharf.api.registry.upstream", collection: "/registry/v2/upstreams" },
  policy: { stem: "dev.wharf.api.registry.policy", collection: "/registry/v2/policies" },
  signingKey: { stem: "dev.wharf.api.registry.signing_key", collection: "/registry/v2/signingKeys" },
  registration: { stem: "dev.wharf.api.auth", collection: "/auth/v1/register" },
} as const;

/** A resource kind of EVENT_RESOURCES. */
export type EventResource = keyof typeof EVENT_RESOURCES;

/**
 * What happened to the resource (`accepted` for terms, `registered` for invite redemption,
 * `warning` and `exceeded` for a registry quota reached at 80 % or refusing a push, `pull_denied`
 * and `pull_warned` for a pull a policy refused or warned about, `severity_raised` for a tag whose
 * newest vulnerability report has more critical or high ones);
 * `created.batch` and `deleted.batch` report a whole batch RPC as one event (role bindings,
 * external group role mappings), as the hosted service does.
 */
export type EventVerb =
  | "created"
  | "updated"
  | "deleted"
  | "accepted"
  | "registered"
  | "warning"
  | "exceeded"
  | "pull_denied"
  | "pull_warned"
  | "severity_raised"
  | "created.batch"
  | "deleted.batch";

/** `dev.wharf.api.<domain>.<resource>.<verb>.v1`. */
export function apiEventType(resource: EventResource, verb: EventVerb): string {
  return `${EVENT_RESOURCES[resource].stem}.${verb}.v1`;
}

/** A manifest PUT. */
export const REGISTRY_PUSH_EVENT = "dev.wharf.registry.push.v1";
/** A manifest GET. */
export const REGISTRY_PULL_EVENT = "dev.wharf.registry.pull.v1";
