import { createHash, randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import type { Duration } from "@bufbuild/protobuf/wkt";
import { pageRequestOf, toTimestamp, toUidpFilter } from "../core/api-convert.js";
import { invalidArgument, notFound } from "../core/errors.js";
import { type ListSpec, paginate } from "../core/list.js";
import { pageEnvelope } from "../core/list-specs.js";
import type { ServiceHandlers } from "../core/service.js";
import { newChildUid, parentOf } from "../core/uidp.js";
import { recordedMutation } from "../events/recorded-mutation.js";
import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import {
  DeleteGroupInviteRequestSchema,
  type GroupInvite,
  GroupInvite_InvitedRoleSchema,
  GroupInviteSchema,
  type GroupInvitesService,
} from "../gen/platform/iam/v2/group_invites_pb.js";
import type { GroupInviteFilter, GroupInviteRow, RoleRow } from "../storage/iam-store.js";
import { visibleRole } from "./resource-rules.js";
import type { IamServiceDeps } from "./service-deps.js";

/** Longest an invite stays valid. */
export const MAX_INVITE_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/** Prefix of invite codes (so a leaked one is recognizable by secret scanners). */
export const INVITE_CODE_PREFIX = "wharf_inv_";

/** Emails: one @, no spaces, a dot in the domain, at most 254 characters. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Newest first by default (`created_at desc`, as the hosted service lists invites). */
const INVITE_LIST: ListSpec<GroupInviteRow> = {
  allowedOrder: ["uid", "create_time", "update_time"],
  defaultOrder: { field: "create_time", desc: true },
  sortValue: (row, field) => (field === "uid" ? row.uid : row.createTime),
  uidOf: (row) => row.uid,
};

/** The hex SHA-256 of an invite code: all the store ever keeps of it. */
export function inviteCodeHash(code: string): string {
  return createHash("sha256").update(code, "utf8").digest("hex");
}

/**
 * GroupInvitesService: invite codes that bind whoever redeems them (POST /auth/v1/register) to a
 * role at the invite's group. The code is returned once, by create; only its hash is stored.
 * Creates and deletes are events of the invite's group; a create's body is only `{uid,
 * expirationTime}` (as the hosted service redacts it), so the code never reaches a webhook.
 */
export function createGroupInvitesService(deps: IamServiceDeps): ServiceHandlers<typeof GroupInvitesService> {
  const { store } = deps;

  async function hydrate(rows: GroupInviteRow[]): Promise<GroupInvite[]> {
    const roles = new Map(
      (await store.roles.getMany([...new Set(rows.map((r) => r.roleUid))])).map((r) => [r.uid, r]),
    );
    return rows.map((row) => groupInviteMessage(row, roles.get(row.roleUid)));
  }

  return {
    async listGroupInvites(req, ctx) {
      const within = await ctx.access.scopesWith([Capability.CAP_IAM_GROUP_INVITES_LIST]);
      const filter: GroupInviteFilter = { uidp: toUidpFilter(req.uidp) };
      if (req.keyId) filter.keyId = req.keyId;
      const page = await paginate(pageRequestOf(req), filter, INVITE_LIST, deps.pageTokens, (window) =>
        store.groupInvites.list({ ...filter, within }, window),
      );
      return { invites: await hydrate(page.items), ...pageEnvelope(page) };
    },

    async getGroupInvite(req) {
      const row = await store.groupInvites.get(req.uid);
      if (!row) throw notFound("group_invite", req.uid);
      return (await hydrate([row]))[0]!;
    },

    async createGroupInvite(req, ctx) {
      const input = req.invite;
      if (!input) throw invalidArgument("role_uid", "is required");
      const ttlMs = ttlOf(input.ttl);
      const email = input.email.trim();
      if (email !== "" && (email.length > 254 || !EMAIL.test(email))) {
        throw invalidArgument("email", "must be an email address");
      }
      if (!(await store.groups.get(req.parent))) throw notFound("group", req.parent);
      const role = await visibleRole(store, input.roleUid, req.parent, "role_uid");
      const now = ctx.clock.now();
      const code = `${INVITE_CODE_PREFIX}${randomBytes(32).toString("base64url")}`;
      const row: GroupInviteRow = {
        uid: newChildUid(req.parent),
        groupUid: req.parent,
        roleUid: role.uid,
        email,
        codeHash: inviteCodeHash(code),
        keyId: randomBytes(8).toString("hex"),
        singleUse: input.singleUse,
        expirationTime: now + ttlMs,
        createTime: now,
      };
      await recordedMutation(deps, ctx, (tx) => tx.groupInvites.insert(row), {
        resource: "groupInvite",
        verb: "created",
        subject: row.uid,
        group: row.groupUid,
        schema: GroupInviteSchema,
        body: { uid: row.uid, expirationTime: toTimestamp(row.expirationTime) },
      });
      const msg = groupInviteMessage(row, role);
      msg.code = code; // the only time the code is ever shown
      return msg;
    },

    async deleteGroupInvite(req, ctx) {
      // Idempotent: deleting a missing invite succeeds and reports nothing.
      await recordedMutation(
        deps,
        ctx,
        (tx) => tx.groupInvites.delete(req.uid),
        (deleted) =>
          deleted
            ? {
                resource: "groupInvite",
                verb: "deleted",
                subject: req.uid,
                group: parentOf(req.uid),
                schema: DeleteGroupInviteRequestSchema,
                body: { uid: req.uid },
              }
            : undefined,
      );
      return {};
    },
  };
}

/** The API message of a stored invite (never with a code: only create shows it). */
export function groupInviteMessage(row: GroupInviteRow, role: RoleRow | undefined): GroupInvite {
  return create(GroupInviteSchema, {
    uid: row.uid,
    roleUid: row.roleUid,
    email: row.email,
    singleUse: row.singleUse,
    keyId: row.keyId,
    expirationTime: toTimestamp(row.expirationTime),
    createTime: toTimestamp(row.createTime),
    updateTime: toTimestamp(row.createTime),
    ...(role
      ? {
          role: create(GroupInvite_InvitedRoleSchema, {
            uid: role.uid,
            name: role.name,
            description: role.description,
            capabilities: role.capabilities,
          }),
        }
      : {}),
  });
}

/** The ttl in ms: required, positive, at most 30 days. */
function ttlOf(ttl: Duration | undefined): number {
  if (!ttl) throw invalidArgument("ttl", "is required");
  const ms = Number(ttl.seconds) * 1000 + Math.floor(ttl.nanos / 1_000_000);
  if (!(ms > 0)) throw invalidArgument("ttl", "must be positive");
  if (ms > MAX_INVITE_TTL_MS) throw invalidArgument("ttl", "must be at most 30 days (720h)");
  return ms;
}
