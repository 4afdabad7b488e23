import { deterministicRootUid } from "../core/uidp.js";
import { Capability as C, type Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import type { RoleRow } from "../storage/iam-store.js";
import type { Store } from "../storage/store.js";
import { ALL_CAPABILITIES, isInternalOnly, shortNameOf } from "./capabilities.js";

/** A role every install has: root-level, read-only through the API, the same uid everywhere. */
export interface BuiltInRole {
  uid: string;
  name: BuiltInRoleName;
  description: string;
  /** Ascending, no duplicates. */
  capabilities: readonly Capability[];
}

/** The uid of the built-in role `name`: sha1 hex of `wharf:role:<name>`. */
export function builtInRoleUid(name: string): string {
  return deterministicRootUid(`wharf:role:${name}`);
}

const customerCaps = ALL_CAPABILITIES.filter((c) => !isInternalOnly(c));

// RegistryPullCaps of the SDK, restricted to the capabilities our enum has.
const registryPull: Capability[] = [
  C.CAP_REPO_BLOBS_GET,
  C.CAP_IAM_GROUPS_LIST,
  C.CAP_REPO_LIST,
  C.CAP_MANIFEST_LIST,
  C.CAP_REFERRERS_LIST,
  C.CAP_TAG_LIST,
  C.CAP_MANIFEST_METADATA_LIST,
  C.CAP_TENANT_RECORD_SIGNATURES_LIST,
  C.CAP_TENANT_SBOMS_LIST,
  C.CAP_TENANT_VULN_REPORTS_LIST,
];

const registryPush: Capability[] = [
  ...registryPull,
  C.CAP_REPO_CREATE,
  C.CAP_REPO_UPDATE,
  C.CAP_REPO_DELETE,
  C.CAP_MANIFEST_CREATE,
  C.CAP_MANIFEST_UPDATE,
  C.CAP_MANIFEST_DELETE,
  C.CAP_TAG_CREATE,
  C.CAP_TAG_UPDATE,
  C.CAP_TAG_DELETE,
  C.CAP_IAM_GROUPS_CREATE,
];

// No identity.list on purpose: it would show a pull-token creator every identity in scope.
const registryPullTokenCreator: Capability[] = [
  ...registryPull,
  C.CAP_IAM_IDENTITY_CREATE,
  C.CAP_IAM_ROLE_BINDINGS_CREATE,
  C.CAP_IAM_ROLES_LIST,
];

// ViewerCaps = ConsoleViewer (every `*.list`) + RegistryPull (adds repo.blobs.get) + terms.list.
// Derived from the enum so a new list capability reaches viewers without touching this file.
const viewer: Capability[] = [
  ...customerCaps.filter((c) => shortNameOf(c).endsWith(".list")),
  C.CAP_REPO_BLOBS_GET,
];

const editor: Capability[] = [
  ...viewer,
  C.CAP_EVENTS_SUBSCRIPTION_CREATE,
  C.CAP_EVENTS_SUBSCRIPTION_UPDATE,
  C.CAP_EVENTS_SUBSCRIPTION_DELETE,
  C.CAP_REPO_CREATE,
  C.CAP_REPO_UPDATE,
  C.CAP_REPO_DELETE,
  // Restoring a tag from its history (extensions.md: "Tag restore").
  C.CAP_TAG_UPDATE,
  // Uploading scanner reports is an editor's job (issue 23; ADR 0024).
  C.CAP_VULN_REPORT_CREATE,
  C.CAP_VULN_CREATE,
];

// Advisories are imported platform-wide data, not an organization's: writing them stays with the
// platform administrator (the upstream owner bundle has no advisory writes either).
const ADVISORY_WRITES: readonly Capability[] = [
  C.CAP_ADVISORIES_CREATE,
  C.CAP_ADVISORIES_UPDATE,
  C.CAP_ADVISORIES_DELETE,
  C.CAP_ADVISORIES_APPROVE,
];
const owner: Capability[] = customerCaps.filter((c) => !ADVISORY_WRITES.includes(c));

function role(name: BuiltInRoleName, title: string, caps: readonly Capability[]): BuiltInRole {
  return Object.freeze({
    uid: builtInRoleUid(name),
    name,
    description: `${title} (built-in)`,
    capabilities: Object.freeze([...new Set(caps)].sort((a, b) => a - b)),
  });
}

/**
 * The built-in roles, in a fixed order. `owner` holds every capability that is not internal-only,
 * except advisory writes.
 */
export const BUILT_IN_ROLES: readonly BuiltInRole[] = Object.freeze([
  role("viewer", "Viewer Role", viewer),
  role("editor", "Editor Role", editor),
  role("owner", "Owner Role", owner),
  role("registry.pull", "Registry Pull Role", registryPull),
  role("registry.push", "Registry Push Role", registryPush),
  role("registry.pull_token_creator", "Registry Pull Token Creator Role", registryPullTokenCreator),
]);

/** Names of the built-in roles. */
export type BuiltInRoleName =
  | "viewer"
  | "editor"
  | "owner"
  | "registry.pull"
  | "registry.push"
  | "registry.pull_token_creator";

/**
 * Uid of each built-in role by name, e.g. `BUILT_IN_ROLE_UIDS.owner` (bound to whoever creates a
 * root organization).
 */
export const BUILT_IN_ROLE_UIDS: Readonly<Record<BuiltInRoleName, string>> = Object.freeze({
  viewer: builtInRoleUid("viewer"),
  editor: builtInRoleUid("editor"),
  owner: builtInRoleUid("owner"),
  "registry.pull": builtInRoleUid("registry.pull"),
  "registry.push": builtInRoleUid("registry.push"),
  "registry.pull_token_creator": builtInRoleUid("registry.pull_token_creator"),
});

/** Uid of the built-in `owner` role, bound to whoever creates a root organization. */
export const OWNER_ROLE_UID = BUILT_IN_ROLE_UIDS.owner;

/** The built-in role with uid `uid`, or undefined. */
export function builtInRoleByUid(uid: string): BuiltInRole | undefined {
  return BUILT_IN_ROLES.find((r) => r.uid === uid);
}

function sameCaps(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((c, i) => c === b[i]);
}

/**
 * Writes the built-in roles to `store` (via `roles.upsertBuiltIn`). Idempotent and safe to run on
 * every start by several processes at once: a role already stored with the same name, description
 * and capabilities is left untouched (its times included); a changed one is replaced keeping its
 * createTime, with updateTime `now`.
 */
export async function seedBuiltInRoles(store: Store, now: number): Promise<void> {
  const stored = new Map(
    (await store.roles.getMany(BUILT_IN_ROLES.map((r) => r.uid))).map((r) => [r.uid, r]),
  );
  for (const role of BUILT_IN_ROLES) {
    const existing = stored.get(role.uid);
    if (
      existing?.builtIn &&
      existing.name === role.name &&
      existing.description === role.description &&
      sameCaps(existing.capabilities, role.capabilities)
    ) {
      continue;
    }
    const row: RoleRow = {
      uid: role.uid,
      name: role.name,
      description: role.description,
      capabilities: [...role.capabilities],
      builtIn: true,
      createTime: existing?.createTime ?? now,
      updateTime: now,
    };
    await store.roles.upsertBuiltIn(row);
  }
}
