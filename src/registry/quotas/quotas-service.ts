import type { RequestContext } from "../../core/context.js";
import { invalidArgument, notFound } from "../../core/errors.js";
import type { ServiceHandlers } from "../../core/service.js";
import { isRoot, requireUidp, rootOf } from "../../core/uidp.js";
import type { EventRecorder } from "../../events/event-recorder.js";
import { recordedMutation } from "../../events/recorded-mutation.js";
import { type Quota, QuotaSchema, type QuotasService } from "../../gen/platform/registry/v2/quotas_pb.js";
import type { Store } from "../../storage/store.js";
import type { OrgUsageRow, QuotaChange } from "../../storage/usage-store.js";

/** What QuotasService is built from. */
export interface QuotasServiceDeps {
  store: Pick<Store, "groups" | "usage" | "transaction">;
  events: EventRecorder;
}

function quotaOf(row: OrgUsageRow | undefined): Omit<Quota, "$typeName"> {
  return {
    storageBytes: BigInt(row?.quotaStorageBytes ?? 0),
    repoCount: BigInt(row?.quotaRepoCount ?? 0),
  };
}

/** A quota field's value: 0 (unlimited) up to 2^53 - 1; INVALID_ARGUMENT otherwise. */
function limit(field: string, value: bigint | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw invalidArgument(field, `must be 0 (unlimited) to ${Number.MAX_SAFE_INTEGER}`);
  }
  return Number(value);
}

/**
 * QuotasService (ADR 0047): GetUsage answers a group's stored bytes (an organization's from its
 * incrementally kept counter, a folder's by a recount of its repos), repos and tags, and its
 * organization's quota; UpdateQuota sets an organization's quota, recorded as `quota.updated`.
 */
export function createQuotasService(deps: QuotasServiceDeps): ServiceHandlers<typeof QuotasService> {
  const { store } = deps;

  const requireGroup = async (uid: string) => {
    requireUidp("group_uid", uid);
    if (!(await store.groups.get(uid))) throw notFound("group", uid);
  };

  return {
    async getUsage(req) {
      await requireGroup(req.groupUid);
      const orgUid = rootOf(req.groupUid);
      const row = await store.usage.get(orgUid);
      const storageBytes = isRoot(req.groupUid)
        ? (row?.storageBytes ?? 0)
        : await store.usage.recount(req.groupUid);
      const { repoCount, tagCount } = await store.usage.counts(req.groupUid);
      return {
        storageBytes: BigInt(storageBytes),
        repoCount: BigInt(repoCount),
        tagCount: BigInt(tagCount),
        quota: quotaOf(row),
      };
    },

    async updateQuota(req, ctx: RequestContext) {
      requireUidp("group_uid", req.groupUid);
      if (!isRoot(req.groupUid)) {
        throw invalidArgument("group_uid", "quotas are set on an organization, not on a folder");
      }
      const change: QuotaChange = {};
      const storageBytes = limit("storage_bytes", req.storageBytes);
      const repoCount = limit("repo_count", req.repoCount);
      if (storageBytes !== undefined) change.storageBytes = storageBytes;
      if (repoCount !== undefined) change.repoCount = repoCount;
      await requireGroup(req.groupUid);
      const row = await recordedMutation(
        deps,
        ctx,
        (tx) => tx.usage.setQuota(req.groupUid, change, ctx.clock.now()),
        (written) => ({
          resource: "quota",
          verb: "updated",
          subject: req.groupUid,
          group: req.groupUid,
          schema: QuotaSchema,
          body: quotaOf(written),
        }),
      );
      return quotaOf(row);
    },
  };
}
