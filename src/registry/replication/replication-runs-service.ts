import { invalidArgument, notFound } from "../../core/errors.js";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../../core/list.js";
import type { ServiceHandlers } from "../../core/service.js";
import { isUidp } from "../../core/uidp.js";
import { Capability } from "../../gen/platform/capabilities/capabilities_pb.js";
import type { ReplicationRunsService } from "../../gen/platform/registry/v2/replication_pb.js";
import type { Store } from "../../storage/store.js";
import { replicationRunMessage } from "./replication-mapping.js";

/** A page token: the last run's create time and uid, as `<ms>.<uid>` in base64url. */
function afterOf(token: string): { createTime: number; uid: string } | undefined {
  if (token === "") return undefined;
  const text = Buffer.from(token, "base64url").toString("utf8");
  const dot = text.indexOf(".");
  const createTime = Number(text.slice(0, dot));
  const uid = text.slice(dot + 1);
  if (dot < 1 || !Number.isSafeInteger(createTime) || !isUidp(uid)) {
    throw invalidArgument("page_token", "malformed page token");
  }
  return { createTime, uid };
}

/**
 * ReplicationRunsService: the runs of replication rules, newest first (ADR 0054). A list shows
 * the runs of the rules the caller may list (`replication.list`), or of one rule (`rule`).
 */
export function createReplicationRunsService(deps: {
  store: Pick<Store, "replication">;
}): ServiceHandlers<typeof ReplicationRunsService> {
  const { store } = deps;
  return {
    async listReplicationRuns(req, ctx) {
      if (req.rule !== "" && !isUidp(req.rule))
        throw invalidArgument("rule", `"${req.rule}" is not a rule uid`);
      if (req.pageSize < 0) throw invalidArgument("page_size", "must not be negative");
      const limit = Math.min(req.pageSize || DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
      const within = await ctx.access.scopesWith([Capability.CAP_REPLICATION_LIST]);
      const after = afterOf(req.pageToken);
      const { rows, total } = await store.replication.listRuns({
        ...(req.rule !== "" ? { ruleUid: req.rule } : {}),
        within,
        ...(after ? { after } : {}),
        limit,
      });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        runs: page.map(replicationRunMessage),
        nextPageToken:
          rows.length > limit && last
            ? Buffer.from(`${last.createTime}.${last.uid}`).toString("base64url")
            : "",
        totalCount: BigInt(total),
      };
    },

    async getReplicationRun(req) {
      const row = await store.replication.getRun(req.uid);
      if (!row) throw notFound("replicationRun", req.uid);
      return replicationRunMessage(row);
    },
  };
}
