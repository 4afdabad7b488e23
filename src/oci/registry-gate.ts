import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import type { ResolvedName } from "../registry/data-plane/repo-resolver.js";
import { ociError } from "./oci-errors.js";
import {
  type RegistryAction,
  type RegistryAuthenticator,
  type RegistryCaller,
  tokenAllows,
} from "./registry-auth.js";

/** Capabilities each action needs at the repo (or, for a repo a push will create, at its deepest group). */
export const ACTION_CAPABILITIES: Record<RegistryAction, readonly Capability[]> = {
  pull: [Capability.CAP_REPO_BLOBS_GET],
  push: [Capability.CAP_MANIFEST_CREATE, Capability.CAP_TAG_CREATE],
  delete: [Capability.CAP_MANIFEST_DELETE],
};

/** Decides whether a caller may act on an image path; the one place registry authorization lives. */
export interface RegistryGate {
  /**
   * Throws unless `caller` may do `action` on `resolved`, needing the action's capabilities or
   * `instead` (e.g. CAP_TAG_DELETE to delete a tag). 401 with a challenge when the token lacks the scope (or there is none); 403 DENIED
   * when the current role bindings do not grant it, for an identity under a subgroup (spec rule),
   * and for an organization that does not exist (indistinguishable from one the caller cannot see).
   * A push to a path that does not exist yet also needs CAP_REPO_CREATE, and CAP_IAM_GROUPS_CREATE
   * when subgroups are missing.
   */
  require(
    caller: RegistryCaller,
    resolved: ResolvedName,
    action: RegistryAction,
    instead?: readonly Capability[],
  ): Promise<void>;
  /** The subset of `actions` the caller's current bindings allow on `resolved` (for `/token`). */
  grantable(
    caller: RegistryCaller,
    resolved: ResolvedName,
    actions: readonly RegistryAction[],
  ): Promise<RegistryAction[]>;
  /** True when `resolved` lies in the public namespace (its organization is named so). */
  isPublic(resolved: ResolvedName): boolean;
}

/** Creates the gate; `publicNamespace` is the organization whose `latest` tags anyone may pull. */
export function createRegistryGate(opts: {
  auth: RegistryAuthenticator;
  publicNamespace: string;
}): RegistryGate {
  const { auth, publicNamespace } = opts;

  function capabilitiesFor(
    resolved: ResolvedName,
    action: RegistryAction,
    instead?: readonly Capability[],
  ): Capability[] {
    const caps = [...(instead ?? ACTION_CAPABILITIES[action])];
    if (action === "push" && !resolved.repo) {
      caps.push(Capability.CAP_REPO_CREATE);
      if (resolved.missingGroups.length > 0) caps.push(Capability.CAP_IAM_GROUPS_CREATE);
    }
    return caps;
  }

  async function bindingsAllow(caller: RegistryCaller, resolved: ResolvedName, caps: readonly Capability[]) {
    if (caller.anonymous || !caller.principal || resolved.scope === undefined) return false;
    if (!mayUseRegistry(caller.principal.identityUid)) return false;
    return caller.access.has(resolved.scope, caps);
  }

  return {
    isPublic: (resolved) => resolved.groups.length > 0 && resolved.name.split("/")[0] === publicNamespace,

    async require(caller, resolved, action, instead) {
      const scope = `repository:${resolved.name}:${action === "push" ? "pull,push" : action}`;
      if (!tokenAllows(caller, resolved.name, action)) {
        throw caller.principal === undefined
          ? auth.challenge("authentication required", scope)
          : auth.challenge(
              `the token does not grant ${action} on ${resolved.name}`,
              scope,
              "insufficient_scope",
            );
      }
      if (caller.principal && !mayUseRegistry(caller.principal.identityUid)) {
        throw ociError("DENIED", "identities created under a subgroup cannot use the registry");
      }
      if (!(await bindingsAllow(caller, resolved, capabilitiesFor(resolved, action, instead)))) {
        throw ociError("DENIED", `requested access to ${resolved.name} is denied`);
      }
    },

    async grantable(caller, resolved, actions) {
      const granted: RegistryAction[] = [];
      for (const action of actions) {
        if (await bindingsAllow(caller, resolved, capabilitiesFor(resolved, action))) granted.push(action);
        else if (
          action === "delete" &&
          (await bindingsAllow(caller, resolved, [Capability.CAP_TAG_DELETE]))
        ) {
          granted.push(action);
        } else if (action === "pull" && this.isPublic(resolved)) granted.push(action);
      }
      return granted;
    },
  };
}

/**
 * Spec rule: only root-level identities and identities directly under an organization can use
 * the registry (uidp depth ≤ 2).
 */
export function mayUseRegistry(identityUid: string): boolean {
  return identityUid.split("/").length <= 2;
}
