import type { Clock } from "../core/clock.js";
import type { Access, AccessScopes, Principal } from "../core/context.js";
import { permissionDenied } from "../core/errors.js";
import { isAncestorOrSelf } from "../core/uidp.js";
import type { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import type { Grant } from "../storage/iam-store.js";
import type { Store } from "../storage/store.js";
import { enumNameOf } from "./capabilities.js";
import { createGrantsCache } from "./grants-cache.js";
import { coveredBy, intersectRoots, minimalRoots } from "./subtrees.js";
import { restrictionsOf, type TokenRestrictions } from "./token-restrictions.js";

/** Turns a verified principal into its `Access`, evaluated against the current role bindings. */
export interface AccessResolver {
  /**
   * The access of `principal` (undefined = anonymous, who holds nothing anywhere). Cheap: call it
   * per request (the same Principal object gets the same Access). Every check reads the identity's
   * grants through a cache at most `ttlMs` old, so a shared Access still sees current bindings.
   */
  accessFor(principal: Principal | undefined): Access;
  /**
   * Makes this process forget cached grants at once (call after writing a role binding or role);
   * of `identityUid` only, or of everyone when omitted. Other processes catch up within `ttlMs`.
   */
  invalidate(identityUid?: string): void;
}

/**
 * Creates the access resolver.
 *
 * Semantics (all scopes are uidps; a grant is a role binding's capabilities at its group):
 * - The administrator (`principal.isAdmin`) holds every capability everywhere.
 * - Anyone else holds capability `c` at uid `u` when a grant whose group is `u` or an ancestor of
 *   `u` includes `c`. `has(u, caps)` needs each capability of `caps` held at `u`; they may come from
 *   different grants (bindings at `u`'s ancestors all apply to `u`, so what counts is the union of
 *   what they give there). Empty `caps` is vacuously held everywhere (within token restrictions).
 * - Token restrictions (claims `scope`, `cap`; see `restrictionsOf`) narrow the result for everyone,
 *   the administrator included: outside the `scope` subtrees, or for a capability missing from
 *   `cap`, nothing is held.
 * - `scopesWith(caps)` returns the minimal subtree roots where `has` is true, sorted; `{all: true}`
 *   only for an administrator without a `scope` restriction (or for empty `caps`, likewise).
 */
export function createAccessResolver(opts: {
  store: Pick<Store, "roleBindings">;
  clock: Clock;
  ttlMs?: number;
  /**
   * Grants a token carries besides its identity's role bindings (a login's external group role
   * mappings), keyed by `sessionKey(claims)`; "" means none. Cached like role-binding grants.
   */
  session?: {
    key(claims: Readonly<Record<string, unknown>>): string;
    grants(key: string): Promise<Grant[]>;
  };
}): AccessResolver {
  const ttlMs = opts.ttlMs ?? 1000;
  const cache = createGrantsCache({ roleBindings: opts.store.roleBindings, clock: opts.clock, ttlMs });
  const session = opts.session;
  const sessionCache =
    session && createGrantsCache({ roleBindings: { grantsOf: session.grants }, clock: opts.clock, ttlMs });
  // A principal's Access holds no state of its own (every check reads the grants cache), and a
  // verified token yields the same Principal object until it expires: build it once per principal
  // rather than a handful of closures per request.
  const built = new WeakMap<Principal, Access>();
  const build = (principal: Principal): Access => {
    const restrictions = restrictionsOf(principal.claims);
    if (principal.isAdmin) return createAccess(undefined, restrictions);
    const key = session?.key(principal.claims) ?? "";
    const grants =
      key === "" || !sessionCache
        ? () => cache.grantsOf(principal.identityUid)
        : async () => [
            ...(await cache.grantsOf(principal.identityUid)),
            ...(await sessionCache.grantsOf(key)),
          ];
    return createAccess(grants, restrictions);
  };
  return {
    accessFor(principal) {
      if (!principal) return noAccess;
      let access = built.get(principal);
      if (access === undefined) {
        access = build(principal);
        built.set(principal, access);
      }
      return access;
    },
    invalidate(identityUid) {
      cache.invalidate(identityUid);
      if (identityUid === undefined) sessionCache?.invalidate();
    },
  };
}

const noAccess: Access = {
  has: async () => false,
  require: async (scope) => {
    throw permissionDenied(`no access to ${scope}`);
  },
  scopesWith: async () => ({ all: false, uids: [] }),
};

/** `grants` undefined means "every capability everywhere" (the administrator). */
function createAccess(
  grants: (() => Promise<readonly Grant[]>) | undefined,
  restrictions: TokenRestrictions,
): Access {
  const capsAllowed = (caps: readonly Capability[]): boolean =>
    restrictions.caps === undefined || caps.every((c) => restrictions.caps?.has(c));

  async function has(scope: string, caps: readonly Capability[]): Promise<boolean> {
    if (!capsAllowed(caps)) return false;
    if (restrictions.scopes !== undefined && !coveredBy(restrictions.scopes, scope)) return false;
    if (!grants) return true;
    const held = new Set<number>();
    for (const g of await grants()) {
      if (isAncestorOrSelf(g.groupUid, scope)) for (const c of g.capabilities) held.add(c);
    }
    return caps.every((c) => held.has(c));
  }

  async function scopesWith(caps: readonly Capability[]): Promise<AccessScopes> {
    if (!capsAllowed(caps)) return { all: false, uids: [] };
    let roots: string[] | undefined = restrictions.scopes ? [...restrictions.scopes] : undefined;
    if (grants) {
      const all = await grants();
      for (const cap of new Set(caps)) {
        const holders = minimalRoots(all.filter((g) => g.capabilities.includes(cap)).map((g) => g.groupUid));
        roots = roots === undefined ? holders : intersectRoots(roots, holders);
      }
    }
    return roots === undefined ? { all: true } : { all: false, uids: roots };
  }

  return {
    has,
    async require(scope, caps) {
      if (await has(scope, caps)) return;
      const names = caps.map(enumNameOf).join(", ");
      throw permissionDenied(`requires ${names} on ${scope}`);
    },
    scopesWith,
  };
}
