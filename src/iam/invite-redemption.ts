import { Code } from "@connectrpc/connect";
import type { Clock } from "../core/clock.js";
import type { Principal } from "../core/context.js";
import { failedPrecondition, isDomainError, permissionDenied } from "../core/errors.js";
import { isRoot, newChildUid } from "../core/uidp.js";
import type { ApiChange, EventRecorder } from "../events/event-recorder.js";
import { recordedMutation } from "../events/recorded-mutation.js";
import { RegistrationSchema } from "../gen/platform/auth/v1/registration_pb.js";
import type { RoleBindingRow } from "../storage/iam-store.js";
import type { Store } from "../storage/store.js";
import { inviteCodeHash } from "./group-invites-service.js";

/** What an invite redemption needs. */
export interface InviteRedemptionDeps {
  /** Read for the caller, the invite and its role; the binding is written in a transaction. */
  store: Pick<Store, "identities" | "groupInvites" | "roles" | "roleBindings" | "transaction">;
  clock: Clock;
  /** Drops cached grants of `identityUid` (after a redemption binds a role). */
  bindingsChanged(identityUid: string): void;
  /** Records each redemption as a `dev.wharf.api.auth.registered.v1` event of the invite's group. */
  events: EventRecorder;
}

/** The one answer for every code that cannot be redeemed by anyone (unknown, malformed, used up). */
const INVALID_CODE = () => permissionDenied("the invite code is not valid");

/**
 * Redeems invite `code` for the caller, a registered person (a root-level identity that exists):
 * the invite must exist (any failure to find it is one generic PERMISSION_DENIED), not be expired
 * (FAILED_PRECONDITION "invite expired"), and, when it names an email, match the caller's
 * (case-insensitive; PERMISSION_DENIED otherwise). A single-use invite is consumed in the same
 * transaction as the binding, by a delete only one redemption can win. The binding (caller,
 * invite role, invite group) is created unless it already exists. Every redemption that commits
 * records one `registered` event (subject: the caller, group: the invite's group) in its transaction.
 */
export async function redeemInvite(
  deps: InviteRedemptionDeps,
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
  const existing = async (s: Pick<Store, "roleBindings">): Promise<RoleBindingRow | undefined> =>
    (
      await s.roleBindings.list(
        { identityUid, groupUid: invite.groupUid, roleUid: invite.roleUid },
        { order: { field: "uid", desc: false }, limit: 1, skip: 0 },
      )
    ).rows[0];
  const ctx = { principal, clock: deps.clock };
  const registered: ApiChange<typeof RegistrationSchema> = {
    resource: "registration",
    verb: "registered",
    subject: identityUid,
    group: invite.groupUid,
    schema: RegistrationSchema,
    body: { identity: identityUid, group: invite.groupUid },
  };
  const bindInvitedRole = async (tx: Store): Promise<RoleBindingRow> => {
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
    return row;
  };
  let binding: RoleBindingRow;
  try {
    binding = await recordedMutation(deps, ctx, bindInvitedRole, registered);
  } catch (err) {
    // A concurrent redemption of a reusable invite by the same person bound the role first; this
    // redemption still succeeds, so it still records its event (the failed transaction recorded none).
    if (!isDomainError(err) || err.code !== Code.AlreadyExists) throw err;
    const found = await recordedMutation(deps, ctx, existing, (row) => (row ? registered : undefined));
    if (!found) throw err;
    binding = found;
  }
  deps.bindingsChanged(identityUid);
  return { identity: identityUid, group: invite.groupUid, roleBinding: binding.uid };
}
