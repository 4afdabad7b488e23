import { pageRequestOf, toUidpFilter } from "../../core/api-convert.js";
import { invalidArgument, notFound, requireFound } from "../../core/errors.js";
import { resolveUpdateMask } from "../../core/field-mask.js";
import { paginate } from "../../core/list.js";
import { namedResourceList, pageEnvelope } from "../../core/list-specs.js";
import type { ServiceHandlers } from "../../core/service.js";
import { isRoot, newChildUid, parentOf, requireUidp } from "../../core/uidp.js";
import { recordedMutation } from "../../events/recorded-mutation.js";
import { Capability } from "../../gen/platform/capabilities/capabilities_pb.js";
import {
  DeleteReplicationRuleRequestSchema,
  type ReplicationRemote,
  type ReplicationRule,
  ReplicationRuleSchema,
  type ReplicationRulesService,
  ReplicationRunSchema,
} from "../../gen/platform/registry/v2/replication_pb.js";
import type { ReplicationRuleRow } from "../../storage/replication-store.js";
import type { ReplicationDeps } from "./replication-deps.js";
import {
  directionOf,
  replicationRuleMessage,
  replicationRunMessage,
  triggerOf,
} from "./replication-mapping.js";
import {
  intervalMsOf,
  validateDestination,
  validatePassword,
  validateRemoteUrl,
  validateRepoPattern,
  validateRuleName,
  validateTagPattern,
  validateTrigger,
  validateUsername,
} from "./replication-validation.js";

const RULE_LIST = namedResourceList<ReplicationRuleRow>();

const RULE_MASK = {
  known: [
    "uid",
    "name",
    "direction",
    "remote",
    "repo_pattern",
    "tag_pattern",
    "destination",
    "trigger",
    "interval",
    "enabled",
    "create_time",
    "update_time",
  ],
  updatable: [
    "name",
    "direction",
    "remote",
    "repo_pattern",
    "tag_pattern",
    "destination",
    "trigger",
    "interval",
    "enabled",
  ],
} as const;

/** The interval's next firing of a rule as it now is: only enabled INTERVAL rules have one. */
function withSchedule(row: ReplicationRuleRow, now: number): ReplicationRuleRow {
  const next = { ...row };
  if (row.trigger === "INTERVAL" && row.enabled) next.nextRunTime = now + row.intervalMs;
  else delete next.nextRunTime;
  return next;
}

/** Which parts of `remote` an update changes: from the mask's `remote.*` paths, or the fields set. */
function remoteParts(paths: readonly string[], input: ReplicationRemote | undefined): Set<string> {
  const parts = new Set<string>();
  const named = paths.map((p) => p.trim()).filter((p) => p === "remote" || p.startsWith("remote."));
  if (paths.length > 0 && !paths.includes("*")) {
    for (const p of named) {
      if (p === "remote") {
        parts.add("url").add("username");
        // A whole `remote` keeps the stored password unless one is given (it is never read back).
        if (input?.password) parts.add("password");
      } else parts.add(p.slice("remote.".length).replace("has_password", "").replace("hasPassword", ""));
    }
  } else if (input) {
    if (input.url !== "") parts.add("url");
    if (input.username !== "") parts.add("username");
    if (input.password !== "") parts.add("password");
  }
  parts.delete("");
  for (const p of parts) {
    if (!["url", "username", "password"].includes(p)) {
      throw invalidArgument("update_mask", `unknown field path "remote.${p}"`);
    }
  }
  return parts;
}

/**
 * ReplicationRulesService: replication rules of an organization (`<org uid>/<16 hex>`), ADR 0054.
 * Every write validates the whole rule (the remote URL as webhook sinks are, patterns, the
 * trigger against the direction, the interval), seals the password (never returned, evented nor
 * logged) and is a `replication_rule.<verb>` event of the organization; a rule's ON_PUSH cursor
 * follows in the same transaction. `:run` queues a run (coalesced with one already queued).
 */
export function createReplicationRulesService(
  deps: ReplicationDeps,
): ServiceHandlers<typeof ReplicationRulesService> {
  const { store } = deps;

  const requireRule = async (uid: string) => {
    const row = await store.replication.getRule(uid);
    if (!row) throw notFound("replicationRule", uid);
    return row;
  };

  /** Checks a rule as a whole (the fields that depend on each other) and its remote URL. */
  const checked = async (row: ReplicationRuleRow, urlChanged: boolean): Promise<ReplicationRuleRow> => {
    validateTrigger(row.direction, row.trigger);
    const intervalMs = intervalMsOf(row.trigger, row.interval);
    const remoteUrl = urlChanged ? await validateRemoteUrl(deps, row.remoteUrl) : row.remoteUrl;
    return { ...row, intervalMs, remoteUrl };
  };

  const ruleChange = (row: ReplicationRuleRow, verb: "created" | "updated", body: ReplicationRule) => ({
    resource: "replicationRule" as const,
    verb,
    subject: row.uid,
    group: row.parentUid,
    schema: ReplicationRuleSchema,
    body,
  });

  return {
    async listReplicationRules(req, ctx) {
      const within = await ctx.access.scopesWith([Capability.CAP_REPLICATION_LIST]);
      const filter = { uidp: toUidpFilter(req.uidp) };
      const page = await paginate(pageRequestOf(req), filter, RULE_LIST, deps.pageTokens, (window) =>
        store.replication.listRules({ ...filter, within }, window),
      );
      return { replicationRules: page.items.map(replicationRuleMessage), ...pageEnvelope(page) };
    },

    async getReplicationRule(req) {
      return replicationRuleMessage(await requireRule(req.uid));
    },

    async createReplicationRule(req, ctx) {
      requireUidp("parent", req.parent);
      const input = req.replicationRule;
      if (!input) throw invalidArgument("replication_rule", "is required");
      if (!isRoot(req.parent) || !(await store.groups.get(req.parent))) {
        throw notFound("organization", req.parent);
      }
      const direction = directionOf(input.direction);
      if (!direction) throw invalidArgument("direction", "direction is required: PUSH or PULL");
      const trigger = triggerOf(input.trigger);
      if (!trigger) throw invalidArgument("trigger", "trigger is required: ON_PUSH, INTERVAL or MANUAL");
      if (!input.remote?.url) throw invalidArgument("remote.url", "remote.url is required");
      const now = ctx.clock.now();
      const draft = await checked(
        {
          uid: newChildUid(req.parent),
          parentUid: req.parent,
          name: validateRuleName(input.name),
          direction,
          remoteUrl: input.remote.url,
          remoteUsername: validateUsername(input.remote.username),
          remotePassword: "",
          repoPattern: validateRepoPattern(input.repoPattern),
          tagPattern: validateTagPattern(input.tagPattern),
          destination: validateDestination(input.destination),
          trigger,
          interval: input.interval,
          intervalMs: 0,
          enabled: input.enabled ?? true,
          createTime: now,
          updateTime: now,
        },
        true,
      );
      const row = withSchedule(
        { ...draft, remotePassword: await deps.secrets.seal(validatePassword(input.remote.password)) },
        now,
      );
      const message = replicationRuleMessage(row);
      await recordedMutation(
        deps,
        ctx,
        async (tx) => {
          await tx.replication.insertRule(row);
          await tx.replication.syncPushCursor(row.parentUid);
        },
        ruleChange(row, "created", message),
      );
      return message;
    },

    async updateReplicationRule(req, ctx) {
      const input = req.replicationRule;
      if (!input) throw invalidArgument("replication_rule", "is required");
      const current = await requireRule(input.uid);
      const paths = req.updateMask?.paths ?? [];
      const fields = resolveUpdateMask(RULE_MASK, paths, () =>
        [
          input.name !== "" ? "name" : "",
          input.direction !== 0 ? "direction" : "",
          input.remote ? "remote" : "",
          input.repoPattern !== "" ? "repo_pattern" : "",
          input.tagPattern !== "" ? "tag_pattern" : "",
          input.destination !== "" ? "destination" : "",
          input.trigger !== 0 ? "trigger" : "",
          input.interval !== "" ? "interval" : "",
          input.enabled !== undefined ? "enabled" : "",
        ].filter(Boolean),
      );
      const now = ctx.clock.now();
      let next: ReplicationRuleRow = { ...current, updateTime: now };
      if (fields.includes("name")) next.name = validateRuleName(input.name);
      if (fields.includes("direction")) {
        const direction = directionOf(input.direction);
        if (!direction) throw invalidArgument("direction", "direction must be PUSH or PULL");
        next.direction = direction;
      }
      if (fields.includes("trigger")) {
        const trigger = triggerOf(input.trigger);
        if (!trigger) throw invalidArgument("trigger", "trigger must be ON_PUSH, INTERVAL or MANUAL");
        next.trigger = trigger;
        // Leaving INTERVAL drops the interval unless the update sets one.
        if (trigger !== "INTERVAL" && !fields.includes("interval")) next.interval = "";
      }
      if (fields.includes("interval")) next.interval = input.interval;
      if (fields.includes("repo_pattern")) next.repoPattern = validateRepoPattern(input.repoPattern);
      if (fields.includes("tag_pattern")) next.tagPattern = validateTagPattern(input.tagPattern);
      if (fields.includes("destination")) next.destination = validateDestination(input.destination);
      // A mask naming `enabled` without a value disables (proto JSON leaves false out).
      if (fields.includes("enabled")) next.enabled = input.enabled ?? false;
      const parts = fields.includes("remote") ? remoteParts(paths, input.remote) : new Set<string>();
      if (parts.has("url")) {
        if (!input.remote?.url) throw invalidArgument("remote.url", "remote.url is required");
        next.remoteUrl = input.remote.url;
      }
      if (parts.has("username")) next.remoteUsername = validateUsername(input.remote?.username ?? "");
      next = await checked(next, parts.has("url"));
      if (parts.has("password")) {
        next.remotePassword = await deps.secrets.seal(validatePassword(input.remote?.password ?? ""));
      }
      const schedule =
        fields.includes("trigger") || fields.includes("interval") || fields.includes("enabled");
      if (schedule) next = withSchedule(next, now);
      const message = replicationRuleMessage(next);
      const updated = next;
      await recordedMutation(
        deps,
        ctx,
        async (tx) => {
          await requireFound(tx.replication.updateRule(updated), "replicationRule", updated.uid);
          await tx.replication.syncPushCursor(updated.parentUid);
        },
        ruleChange(updated, "updated", message),
      );
      return message;
    },

    async deleteReplicationRule(req, ctx) {
      await recordedMutation(
        deps,
        ctx,
        async (tx) => {
          await requireFound(tx.replication.deleteRule(req.uid), "replicationRule", req.uid);
          await tx.replication.syncPushCursor(parentOf(req.uid));
        },
        {
          resource: "replicationRule",
          verb: "deleted",
          subject: req.uid,
          group: parentOf(req.uid),
          schema: DeleteReplicationRuleRequestSchema,
          body: { uid: req.uid },
        },
      );
      return {};
    },

    async runReplicationRule(req, ctx) {
      const rule = await requireRule(req.uid);
      const uid = newChildUid(rule.uid);
      const run = await recordedMutation(
        deps,
        ctx,
        (tx) =>
          tx.replication.enqueueRun({
            uid,
            ruleUid: rule.uid,
            trigger: "MANUAL",
            createTime: ctx.clock.now(),
          }),
        (queued) =>
          // Coalesced with a run already queued: nothing new to report.
          queued.uid !== uid
            ? undefined
            : {
                resource: "replicationRun" as const,
                verb: "created" as const,
                subject: queued.uid,
                group: rule.parentUid,
                schema: ReplicationRunSchema,
                body: replicationRunMessage(queued),
              },
      );
      deps.queued?.();
      return replicationRunMessage(run);
    },
  };
}
