import { Code } from "@connectrpc/connect";
import { enumNameOf, shortNameOf } from "../authz/capabilities.js";
import { restrictionsOf } from "../authz/token-restrictions.js";
import type { Clock } from "../core/clock.js";
import type { Principal } from "../core/context.js";
import { failedPrecondition, invalidArgument, isDomainError, permissionDenied } from "../core/errors.js";
import { isAncestorOrSelf, isRoot, newChildUid } from "../core/uidp.js";
import type { EventRecorder } from "../events/event-recorder.js";
import { RegistrationSchema } from "../gen/platform/auth/v1/registration_pb.js";
import type { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import type { RoleBindingRow, Store } from "../storage/store.js";
import type { ExtraRoute } from "../transport/create-api-handler.js";
import { authenticateBearer, plainRoute } from "../transport/plain-route.js";
import { inviteCodeHash } from "./group-invites-service.js";

/** ErrorInfo domain of the /auth/v1 routes. */
const AUTH_DOMAIN = "iam.wharf.dev";

/** What the /auth/v1 routes are built from. */
export interface AuthRoutesDeps {
  store: Store;
  verifier: { authenticate(token: string): Promise<Principal> };
  clock: Clock;
  /** Drops cached grants of `identityUid` (after a redemption binds a role). */
  bindingsChanged(identityUid: string): void;
  /** Records each redemption as a `dev.wharf.api.auth.registered.v1` event of the invite's group. */
  events: EventRecorder;
}

/** The one answer for every code that cannot be redeemed by anyone (unknown, malformed, used up). */
const INVALID_CODE = () => permissionDenied("the invite code is not valid");

/**
 * `POST /auth/v1/register` (redeem an invite code for the caller) and `GET /auth/v1/ok` (who am I),
 * on the API port, answered in google.rpc.Status JSON on failure.
 */
export function createAuthRoutes(deps: AuthRoutesDeps): ExtraRoute[] {
  return [
    plainRoute("/auth/v1/register", ["POST"], AUTH_DOMAIN, async ({ req, params }) => {
      const principal = await authenticateBearer(req, deps.verifier);
      const code = params.get("code");
      if (code === "") throw invalidArgument("code", "is required");
      return { body: await redeemInvite(deps, principal, code) };
    }),
    plainRoute("/auth/v1/ok", ["GET"], AUTH_DOMAIN, async ({ req }) => {
      const principal = await authenticateBearer(req, deps.verifier);
      return { body: await whoAmI(deps.store, principal) };
    }),
  ];
}

/**
 * Redeems invite `code` for the caller, a registered person (a root-level identity that exists):
 * the invite must exist (any failure to find it is one generic PERMISSION_DENIED), not be expired
 * (FAILED_PRECONDITION "invite expired"), and, when it names an email, match the caller's
 * (case-insensitive; PERMISSION_DENIED otherwise). A single-use invite is consumed in the same
 * transaction as the binding, by a delete only one redemption can win. The binding (caller,
 * invite role, invite group) is created unless it already exists. Every redemption that commits
 * records one `registered` event (subject: the caller, group: the invite's group) in its transaction.
 */
async function redeemInvite(
  deps: AuthRoutesDeps,
  principal: Principal,
  code: string,
): Promise<{ identity: string; group: string; roleBinding: string }> {
  const { store } = deps;
  const identityUid = principal.identityUid;
  if (principal.isAdmin || !isRoot(identityUid)) {
    throw permissionDenied("only registered people (root-level identities) may redeem invites");
  }
  const identity = await store.identities.get(identityUid);
  if (!identity) throw permissionDenied("the calling identity does not exist");
  const invite = await store.groupInvites.getByCodeHash(inviteCodeHash(code));
  if (!invite) throw INVALID_CODE();
  const now = deps.clock.now();
  if (invite.expirationTime <= now) throw failedPrecondition("INVITE_EXPIRED", "invite expired");
  if (invite.email !== "" && invite.email.toLowerCase() !== identity.email.toLowerCase()) {
    throw permissionDenied("the invite is for another email address");
  }
  if (!(await store.roles.get(invite.roleUid))) {
    throw failedPrecondition("ROLE_GONE", "the invite's role no longer exists");
  }
  const existing = async (s: Store): Promise<RoleBindingRow | undefined> =>
    (
      await s.roleBindings.list(
        { identityUid, groupUid: invite.groupUid, roleUid: invite.roleUid },
        { order: { field: "uid", desc: false }, limit: 1, skip: 0 },
      )
    ).rows[0];
  const registered = (tx: Store) =>
    deps.events.change(
      tx,
      { principal, clock: deps.clock },
      {
        resource: "registration",
        verb: "registered",
        subject: identityUid,
        group: invite.groupUid,
        schema: RegistrationSchema,
        body: { identity: identityUid, group: invite.groupUid },
      },
    );
  let binding: RoleBindingRow;
  try {
    binding = await store.transaction(async (tx) => {
      if (invite.singleUse && !(await tx.groupInvites.delete(invite.uid))) throw INVALID_CODE();
      if (!(await tx.groups.get(invite.groupUid))) throw INVALID_CODE();
      // Locked until the binding commits, so a concurrent delete of the caller's identity sees it.
      if (!(await tx.identities.lockForReference(identityUid))) {
        throw permissionDenied("the calling identity does not exist");
      }
      let row = await existing(tx);
      if (!row) {
        row = {
          uid: newChildUid(invite.groupUid),
          groupUid: invite.groupUid,
          identityUid,
          roleUid: invite.roleUid,
          createTime: now,
          updateTime: now,
        };
        await tx.roleBindings.insert(row);
      }
      await registered(tx);
      return row;
    });
  } catch (err) {
    // A concurrent redemption of a reusable invite by the same person bound the role first; this
    // redemption still succeeds, so it still records its event (the failed transaction recorded none).
    if (!isDomainError(err) || err.code !== Code.AlreadyExists) throw err;
    const found = await store.transaction(async (tx) => {
      const row = await existing(tx);
      if (row) await registered(tx);
      return row;
    });
    if (!found) throw err;
    binding = found;
  }
  deps.bindingsChanged(identityUid);
  return { identity: identityUid, group: invite.groupUid, roleBinding: binding.uid };
}

/** One group in the who-am-I answer. */
interface WhoAmIGroup {
  uid: string;
  name: string;
  role: { uid: string; name: string };
  capabilities: string[];
}

/**
 * The caller and what their current role bindings give them, narrowed by the token's `scope` and
 * `cap` restrictions: a binding at G shows as G when the token reaches G, or as each restricted
 * scope under G otherwise; capabilities are short names, limited to the token's `cap`.
 */
async function whoAmI(
  store: Store,
  principal: Principal,
): Promise<{
  identity: { uid: string; name: string; email: string };
  admin?: boolean;
  groups: WhoAmIGroup[];
}> {
  const identity = await store.identities.get(principal.identityUid);
  const restrictions = restrictionsOf(principal.claims);
  const allowed = (caps: readonly number[]) =>
    caps.filter((c) => restrictions.caps === undefined || restrictions.caps.has(c as Capability));
  const bindings = (
    await store.roleBindings.list(
      { identityUid: principal.identityUid },
      { order: { field: "uid", desc: false }, limit: 1000, skip: 0 },
    )
  ).rows;
  const placements: { groupUid: string; binding: RoleBindingRow }[] = [];
  for (const b of bindings) {
    const scopes = restrictions.scopes;
    if (scopes === undefined || scopes.some((s) => isAncestorOrSelf(s, b.groupUid))) {
      placements.push({ groupUid: b.groupUid, binding: b });
    } else {
      for (const s of scopes)
        if (isAncestorOrSelf(b.groupUid, s)) placements.push({ groupUid: s, binding: b });
    }
  }
  const groups = new Map(
    (await store.groups.getMany([...new Set(placements.map((p) => p.groupUid))])).map((g) => [g.uid, g]),
  );
  const roles = new Map(
    (await store.roles.getMany([...new Set(bindings.map((b) => b.roleUid))])).map((r) => [r.uid, r]),
  );
  const out: WhoAmIGroup[] = [];
  for (const { groupUid, binding } of placements) {
    const group = groups.get(groupUid);
    const role = roles.get(binding.roleUid);
    if (!group || !role) continue;
    out.push({
      uid: group.uid,
      name: group.name,
      role: { uid: role.uid, name: role.name },
      capabilities: allowed(role.capabilities)
        .map((c) => shortNameOf(c as Capability) || enumNameOf(c as Capability))
        .filter((n) => n !== ""),
    });
  }
  return {
    identity: {
      uid: principal.identityUid,
      name: identity?.name ?? "",
      email: identity?.email ?? "",
    },
    ...(principal.isAdmin ? { admin: true } : {}),
    groups: out,
  };
}
