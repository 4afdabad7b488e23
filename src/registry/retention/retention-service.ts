import { create } from "@bufbuild/protobuf";
import { pageRequestOf, toTimestamp, toUidpFilter } from "../../core/api-convert.js";
import { invalidArgument, notFound } from "../../core/errors.js";
import { resolveUpdateMask } from "../../core/field-mask.js";
import type { ListSpec } from "../../core/list.js";
import { paginate } from "../../core/list.js";
import { pageEnvelope } from "../../core/list-specs.js";
import type { ServiceHandlers } from "../../core/service.js";
import { newChildUid, parentOf } from "../../core/uidp.js";
import { validateDescription } from "../../core/validation.js";
import { recordedMutation } from "../../events/recorded-mutation.js";
import { Capability } from "../../gen/platform/capabilities/capabilities_pb.js";
import {
  DeleteRetentionPolicyRequestSchema,
  type RetentionPoliciesService,
  type RetentionPolicy,
  RetentionPolicySchema,
  type RetentionRun,
  RetentionRunSchema,
  type RetentionTag,
  RetentionTagSchema,
} from "../../gen/platform/registry/v2/retention_pb.js";
import type { RetentionPolicyRow, RetentionRunSummary } from "../../storage/retention-store.js";
import type { RetentionDeps } from "./retention-deps.js";
import { scheduleMs, validateRules } from "./retention-rules.js";
import { type PlannedRemoval, planRemovals, runPolicy } from "./retention-run.js";

const POLICY_LIST: ListSpec<RetentionPolicyRow> = {
  allowedOrder: ["uid", "create_time", "update_time"],
  defaultOrder: { field: "uid", desc: false },
  sortValue: (row, field) =>
    field === "uid" ? row.uid : field === "create_time" ? row.createTime : row.updateTime,
  uidOf: (row) => row.uid,
};

const POLICY_MASK = {
  known: [
    "uid",
    "description",
    "rules",
    "schedule",
    "last_run",
    "create_time",
    "update_time",
    "next_run_time",
  ],
  updatable: ["description", "rules", "schedule"],
} as const;

function runMessage(summary: RetentionRunSummary, removed: readonly PlannedRemoval[] = []): RetentionRun {
  return create(RetentionRunSchema, {
    uid: summary.uid,
    startTime: toTimestamp(summary.startTime),
    endTime: toTimestamp(summary.endTime),
    deletedTags: BigInt(summary.deletedTags),
    tags: removed.map(retentionTagMessage),
    scheduled: summary.scheduled,
  });
}

function retentionTagMessage(removal: PlannedRemoval): RetentionTag {
  return create(RetentionTagSchema, {
    uid: removal.tag.uid,
    repo: removal.repoName,
    name: removal.tag.name,
    digest: removal.tag.digest,
    reason: removal.reason,
  });
}

/** The API's RetentionPolicy of a stored row. */
export function retentionPolicyMessage(row: RetentionPolicyRow): RetentionPolicy {
  return create(RetentionPolicySchema, {
    uid: row.uid,
    description: row.description,
    rules: row.rules,
    schedule: row.schedule,
    lastRun: row.lastRun && runMessage(row.lastRun),
    createTime: toTimestamp(row.createTime),
    updateTime: toTimestamp(row.updateTime),
    nextRunTime: toTimestamp(row.nextRunTime),
  });
}

/**
 * RetentionPoliciesService: retention policies of an organization, folder or repo
 * (`<parent uid>/<16 hex>`), their preview and their runs (ADR 0046). Creating, updating and
 * deleting a policy are `retention_policy.*` events of its parent; a run's removals are the
 * ordinary `tag.deleted` events. A scheduled policy's first run is one interval after it is
 * created (or its schedule changed).
 */
export function createRetentionPoliciesService(
  deps: RetentionDeps,
): ServiceHandlers<typeof RetentionPoliciesService> {
  const { store } = deps;

  const requirePolicy = async (uid: string) => {
    const row = await store.retention.get(uid);
    if (!row) throw notFound("retentionPolicy", uid);
    return row;
  };

  return {
    async listRetentionPolicies(req, ctx) {
      const within = await ctx.access.scopesWith([Capability.CAP_REGISTRY_POLICIES_LIST]);
      const filter = { uidp: toUidpFilter(req.uidp) };
      const page = await paginate(pageRequestOf(req), filter, POLICY_LIST, deps.pageTokens, (window) =>
        store.retention.list({ ...filter, within }, window),
      );
      return { retentionPolicies: page.items.map(retentionPolicyMessage), ...pageEnvelope(page) };
    },

    async getRetentionPolicy(req) {
      return retentionPolicyMessage(await requirePolicy(req.uid));
    },

    async createRetentionPolicy(req, ctx) {
      const input = req.retentionPolicy;
      if (!input) throw invalidArgument("retention_policy", "is required");
      const repo = await store.repos.get(req.parent);
      if (!repo && !(await store.groups.get(req.parent))) throw notFound("group or repo", req.parent);
      validateDescription(input.description);
      const rules = validateRules(input.rules, repo !== undefined);
      const interval = scheduleMs(input.schedule);
      const now = ctx.clock.now();
      const row: RetentionPolicyRow = {
        uid: newChildUid(req.parent),
        parentUid: req.parent,
        description: input.description,
        rules,
        schedule: input.schedule,
        scheduleMs: interval,
        ...(interval > 0 ? { nextRunTime: now + interval } : {}),
        createTime: now,
        updateTime: now,
      };
      const message = retentionPolicyMessage(row);
      await recordedMutation(deps, ctx, (tx) => tx.retention.insert(row), {
        resource: "retentionPolicy",
        verb: "created",
        subject: row.uid,
        group: row.parentUid,
        schema: RetentionPolicySchema,
        body: message,
      });
      return message;
    },

    async updateRetentionPolicy(req, ctx) {
      const input = req.retentionPolicy;
      if (!input) throw invalidArgument("retention_policy", "is required");
      const current = await requirePolicy(input.uid);
      const fields = resolveUpdateMask(POLICY_MASK, req.updateMask?.paths ?? [], () =>
        [
          input.description !== "" ? "description" : "",
          input.rules.length > 0 ? "rules" : "",
          input.schedule !== "" ? "schedule" : "",
        ].filter(Boolean),
      );
      const now = ctx.clock.now();
      const next: RetentionPolicyRow = { ...current, updateTime: now };
      if (fields.includes("description")) {
        validateDescription(input.description);
        next.description = input.description;
      }
      if (fields.includes("rules")) {
        next.rules = validateRules(input.rules, (await store.repos.get(current.parentUid)) !== undefined);
      }
      if (fields.includes("schedule") && input.schedule !== current.schedule) {
        next.scheduleMs = scheduleMs(input.schedule);
        next.schedule = input.schedule;
        if (next.scheduleMs > 0) next.nextRunTime = now + next.scheduleMs;
        else delete next.nextRunTime;
      }
      const message = retentionPolicyMessage(next);
      await recordedMutation(
        deps,
        ctx,
        async (tx) => {
          if (!(await tx.retention.update(next))) throw notFound("retentionPolicy", next.uid);
        },
        {
          resource: "retentionPolicy",
          verb: "updated",
          subject: next.uid,
          group: next.parentUid,
          schema: RetentionPolicySchema,
          body: message,
        },
      );
      return message;
    },

    async deleteRetentionPolicy(req, ctx) {
      await recordedMutation(
        deps,
        ctx,
        async (tx) => {
          if (!(await tx.retention.delete(req.uid))) throw notFound("retentionPolicy", req.uid);
        },
        {
          resource: "retentionPolicy",
          verb: "deleted",
          subject: req.uid,
          group: parentOf(req.uid),
          schema: DeleteRetentionPolicyRequestSchema,
          body: { uid: req.uid },
        },
      );
      return {};
    },

    async previewRetentionPolicy(req, ctx) {
      const policy = await requirePolicy(req.uid);
      const planned = await planRemovals(deps, policy, ctx.clock.now());
      return { tags: planned.map(retentionTagMessage) };
    },

    async runRetentionPolicy(req, ctx) {
      const outcome = await runPolicy(deps, ctx, req.uid, false);
      if (!outcome) throw notFound("retentionPolicy", req.uid);
      return runMessage(outcome.summary, outcome.removed);
    },
  };
}
