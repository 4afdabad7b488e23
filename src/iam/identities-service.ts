import { pageRequestOf, toUidpFilter } from "../core/api-convert.js";
import {
  type DomainError,
  failedPreconditions,
  invalidArgument,
  notFound,
  requireFound,
} from "../core/errors.js";
import { resolveUpdateMask } from "../core/field-mask.js";
import { paginate } from "../core/list.js";
import { namedResourceList, pageEnvelope } from "../core/list-specs.js";
import type { ServiceHandlers } from "../core/service.js";
import { newChildUid, parentOf } from "../core/uidp.js";
import { validateDescription, validateName } from "../core/validation.js";
import { recordedMutation } from "../events/recorded-mutation.js";
import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import {
  DeleteIdentityRequestSchema,
  type IdentitiesService,
  type Identity,
  IdentitySchema,
  RelationshipType,
} from "../gen/platform/iam/v2/identities_pb.js";
import type { IdentityFilter, IdentityRow, RoleBindingRow } from "../storage/iam-store.js";
import type { Store } from "../storage/store.js";
import { claimMatchData, identityMessage, staticKeysData } from "./identity-mapping.js";
import { registeredIdentityUid } from "./registered-identity.js";
import type { IamServiceDeps } from "./service-deps.js";

const IDENTITY_LIST = namedResourceList<IdentityRow>();

const IDENTITY_MASK = {
  known: [
    "uid",
    "name",
    "description",
    "email",
    "last_seen_time",
    "create_time",
    "update_time",
    "claim_match",
    "static_keys",
  ],
  updatable: ["name", "description", "claim_match", "static_keys"],
} as const;

/**
 * IdentitiesService: identities under groups (assumable by other issuers) and registered people.
 * Creates, updates and deletes are events of the identity's group.
 */
export function createIdentitiesService(deps: IamServiceDeps): ServiceHandlers<typeof IdentitiesService> {
  const { store } = deps;
  return {
    async listIdentities(req, ctx) {
      const within = await ctx.access.scopesWith([Capability.CAP_IAM_IDENTITY_LIST]);
      const filter: IdentityFilter = { uidp: toUidpFilter(req.uidp) };
      if (req.name) filter.name = req.name;
      if (req.relationshipType === RelationshipType.CLAIM_MATCH) filter.relationship = "claim_match";
      if (req.relationshipType === RelationshipType.STATIC) filter.relationship = "static_keys";
      const page = await paginate(pageRequestOf(req), filter, IDENTITY_LIST, deps.pageTokens, (window) =>
        store.identities.list({ ...filter, within }, window),
      );
      return {
        identities: page.items.map(identityMessage),
        ...pageEnvelope(page),
      };
    },

    async getIdentity(req) {
      const row = await store.identities.get(req.uid);
      if (!row) throw notFound("identity", req.uid);
      return identityMessage(row);
    },

    async createIdentity(req, ctx) {
      const input = req.identity;
      validateName(input?.name ?? "");
      validateDescription(input?.description ?? "");
      if (!input) throw invalidArgument("name", "is required");
      if (!(await store.groups.get(req.parent))) throw notFound("group", req.parent);
      const now = ctx.clock.now();
      const row: IdentityRow = {
        uid: newChildUid(req.parent),
        name: input.name,
        description: input.description,
        email: "",
        createTime: now,
        updateTime: now,
        ...relationshipOf(input, now),
      };
      const message = identityMessage(row);
      await recordedMutation(deps, ctx, (tx) => tx.identities.insert(row), {
        resource: "identity",
        verb: "created",
        subject: row.uid,
        group: req.parent,
        schema: IdentitySchema,
        body: message,
      });
      return message;
    },

    async updateIdentity(req, ctx) {
      const input = req.identity;
      if (!input) throw invalidArgument("identity", "is required");
      const current = await store.identities.get(input.uid);
      if (!current) throw notFound("identity", input.uid);
      const fields = resolveUpdateMask(IDENTITY_MASK, req.updateMask?.paths ?? [], () =>
        populatedFields(input),
      );
      const now = ctx.clock.now();
      const next: IdentityRow = { ...current, updateTime: now };
      if (fields.includes("name")) {
        validateName(input.name);
        next.name = input.name;
      }
      if (fields.includes("description")) {
        validateDescription(input.description);
        next.description = input.description;
      }
      if (fields.includes("claim_match") || fields.includes("static_keys")) {
        delete next.claimMatch;
        delete next.staticKeys;
        Object.assign(next, relationshipOf(input, now));
      }
      const message = identityMessage(next);
      await recordedMutation(
        deps,
        ctx,
        (tx) => requireFound(tx.identities.update(next), "identity", input.uid),
        {
          resource: "identity",
          verb: "updated",
          subject: next.uid,
          group: parentOf(next.uid),
          schema: IdentitySchema,
          body: message,
        },
      );
      return message;
    },

    async deleteIdentity(req, ctx) {
      // Spec: a role binding is deleted before the identity it references. The lock makes a binding
      // created concurrently either visible to the check below or refused (identity not found).
      const deleteUnboundIdentity = async (tx: Store) => {
        if (!(await tx.identities.lockForDelete(req.uid))) throw notFound("identity", req.uid);
        const bindings = await tx.roleBindings.list(
          { identityUid: req.uid },
          { order: { field: "uid", desc: false }, limit: MAX_LISTED_BLOCKERS, skip: 0 },
        );
        if (bindings.rows.length > 0) {
          throw stillBound(req.uid, bindings.rows.slice(0, MAX_LISTED_BLOCKERS), Number(bindings.total));
        }
        await tx.identities.delete(req.uid);
      };
      await recordedMutation(deps, ctx, deleteUnboundIdentity, {
        resource: "identity",
        verb: "deleted",
        subject: req.uid,
        group: parentOf(req.uid),
        schema: DeleteIdentityRequestSchema,
        body: { uid: req.uid },
      });
      deps.bindingsChanged(req.uid);
      return {};
    },

    async lookupIdentity(req) {
      if (!URL.canParse(req.issuer)) throw invalidArgument("issuer", "must be an absolute URL");
      if (req.subject === "") throw invalidArgument("subject", "is required");
      return { uid: registeredIdentityUid(req.issuer, req.subject) };
    },
  };
}

/** Most role bindings named, one violation each, when they block an identity delete. */
export const MAX_LISTED_BLOCKERS = 20;

/**
 * FAILED_PRECONDITION for an identity that role bindings still reference: one RESOURCE_IN_USE
 * violation per binding (subject: the binding's uid), the first MAX_LISTED_BLOCKERS of `total`.
 */
function stillBound(identityUid: string, bindings: RoleBindingRow[], total: number): DomainError {
  const listed = total > bindings.length ? ` (the first ${bindings.length} are listed)` : "";
  return failedPreconditions(
    `identity ${identityUid} is still referenced by ${total} role binding${total === 1 ? "" : "s"}${listed}; delete ${total === 1 ? "it" : "them"} first`,
    bindings.map((b) => ({
      type: "RESOURCE_IN_USE",
      subject: b.uid,
      description: `role binding ${b.uid} grants role ${b.roleUid} to identity ${identityUid} at group ${b.groupUid}`,
    })),
  );
}

/** The relationship fields of a stored identity for the request's oneof. */
function relationshipOf(input: Identity, now: number): Pick<IdentityRow, "claimMatch" | "staticKeys"> {
  switch (input.relationship.case) {
    case "claimMatch":
      return { claimMatch: claimMatchData(input.relationship.value) };
    case "staticKeys":
      return { staticKeys: staticKeysData(input.relationship.value, now) };
    default:
      throw invalidArgument("claim_match", "one of claim_match or static_keys is required");
  }
}

function populatedFields(input: Identity): string[] {
  const out: string[] = [];
  if (input.name !== "") out.push("name");
  if (input.description !== "") out.push("description");
  if (input.relationship.case === "claimMatch") out.push("claim_match");
  if (input.relationship.case === "staticKeys") out.push("static_keys");
  return out;
}
