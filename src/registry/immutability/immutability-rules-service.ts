import { pageRequestOf, toUidpFilter } from "../../core/api-convert.js";
import { invalidArgument, notFound, requireFound } from "../../core/errors.js";
import { resolveUpdateMask } from "../../core/field-mask.js";
import { type ListSpec, paginate } from "../../core/list.js";
import { pageEnvelope } from "../../core/list-specs.js";
import type { ServiceHandlers } from "../../core/service.js";
import { newChildUid, parentOf, requireUidp } from "../../core/uidp.js";
import { validateDescription } from "../../core/validation.js";
import { recordedMutation } from "../../events/recorded-mutation.js";
import { Capability } from "../../gen/platform/capabilities/capabilities_pb.js";
import {
  DeleteImmutabilityRuleRequestSchema,
  ImmutabilityRuleSchema,
  type ImmutabilityRulesService,
} from "../../gen/platform/registry/v2/immutability_pb.js";
import type { ImmutabilityRuleRow } from "../../storage/immutability-store.js";
import { requireGroupOrRepo } from "../resource-parent.js";
import type { RegistryServiceDeps } from "../service-deps.js";
import { immutabilityRuleMessage, validateTagPatterns } from "./immutability-mapping.js";

/** Rules have no name: by uid (default), create or update time. */
const RULE_LIST: ListSpec<ImmutabilityRuleRow> = {
  allowedOrder: ["uid", "create_time", "update_time"],
  defaultOrder: { field: "uid", desc: false },
  sortValue: (row, field) =>
    field === "create_time" ? row.createTime : field === "update_time" ? row.updateTime : row.uid,
  uidOf: (row) => row.uid,
};

const RULE_MASK = {
  known: ["uid", "tag_patterns", "description", "create_time", "update_time"],
  updatable: ["tag_patterns", "description"],
} as const;

/**
 * ImmutabilityRulesService: rules under an organization, a folder or a repo (ADR 0045). Patterns
 * are validated on every write; each change is an `immutability_rule.<verb>` event of the parent.
 * The rules take effect at the next push, tag write or delete (they are read in its transaction).
 */
export function createImmutabilityRulesService(
  deps: RegistryServiceDeps,
): ServiceHandlers<typeof ImmutabilityRulesService> {
  const { store } = deps;
  return {
    async listImmutabilityRules(req, ctx) {
      const within = await ctx.access.scopesWith([Capability.CAP_REGISTRY_POLICIES_LIST]);
      const filter = { uidp: toUidpFilter(req.uidp) };
      const page = await paginate(pageRequestOf(req), filter, RULE_LIST, deps.pageTokens, (window) =>
        store.immutabilityRules.list({ ...filter, within }, window),
      );
      return { immutabilityRules: page.items.map(immutabilityRuleMessage), ...pageEnvelope(page) };
    },

    async getImmutabilityRule(req) {
      const row = await store.immutabilityRules.get(req.uid);
      if (!row) throw notFound("immutability rule", req.uid);
      return immutabilityRuleMessage(row);
    },

    async createImmutabilityRule(req, ctx) {
      requireUidp("parent", req.parent);
      const input = req.immutabilityRule;
      validateTagPatterns(input?.tagPatterns ?? []);
      validateDescription(input?.description ?? "");
      const now = ctx.clock.now();
      const row: ImmutabilityRuleRow = {
        uid: newChildUid(req.parent),
        parentUid: req.parent,
        tagPatterns: [...(input?.tagPatterns ?? [])],
        description: input?.description ?? "",
        createTime: now,
        updateTime: now,
      };
      const message = immutabilityRuleMessage(row);
      await recordedMutation(
        deps,
        ctx,
        async (tx) => {
          await requireGroupOrRepo(tx, req.parent);
          await tx.immutabilityRules.insert(row);
        },
        {
          resource: "immutabilityRule",
          verb: "created",
          subject: row.uid,
          group: row.parentUid,
          schema: ImmutabilityRuleSchema,
          body: message,
        },
      );
      return message;
    },

    async updateImmutabilityRule(req, ctx) {
      const input = req.immutabilityRule;
      if (!input) throw invalidArgument("immutability_rule", "is required");
      const current = await store.immutabilityRules.get(input.uid);
      if (!current) throw notFound("immutability rule", input.uid);
      const fields = resolveUpdateMask(RULE_MASK, req.updateMask?.paths ?? [], () =>
        [
          input.tagPatterns.length > 0 ? "tag_patterns" : "",
          input.description !== "" ? "description" : "",
        ].filter(Boolean),
      );
      const next: ImmutabilityRuleRow = { ...current, updateTime: ctx.clock.now() };
      if (fields.includes("tag_patterns")) {
        validateTagPatterns(input.tagPatterns);
        next.tagPatterns = [...input.tagPatterns];
      }
      if (fields.includes("description")) {
        validateDescription(input.description);
        next.description = input.description;
      }
      const message = immutabilityRuleMessage(next);
      await recordedMutation(
        deps,
        ctx,
        (tx) => requireFound(tx.immutabilityRules.update(next), "immutability rule", next.uid),
        {
          resource: "immutabilityRule",
          verb: "updated",
          subject: next.uid,
          group: next.parentUid,
          schema: ImmutabilityRuleSchema,
          body: message,
        },
      );
      return message;
    },

    async deleteImmutabilityRule(req, ctx) {
      await recordedMutation(
        deps,
        ctx,
        (tx) => requireFound(tx.immutabilityRules.delete(req.uid), "immutability rule", req.uid),
        {
          resource: "immutabilityRule",
          verb: "deleted",
          subject: req.uid,
          group: parentOf(req.uid),
          schema: DeleteImmutabilityRuleRequestSchema,
          body: { uid: req.uid },
        },
      );
      return {};
    },
  };
}
