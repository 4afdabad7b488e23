import { isDomainError } from "../../core/errors.js";
import { rootOf } from "../../core/uidp.js";
import { QUOTA_EXCEEDED } from "../../iam/creation-quota.js";
import type { Store } from "../../storage/store.js";
import type { QuotaEventSink } from "./storage-quota.js";

/** True for the FAILED_PRECONDITION a repo past its organization's repo count is refused with. */
export function isRepoQuotaRefusal(err: unknown): boolean {
  return (
    isDomainError(err) && (err.details.preconditionViolations ?? []).some((v) => v.type === QUOTA_EXCEEDED)
  );
}

/**
 * Runs `create` (a repo create in its own transaction, see admitNewResource); when the repo count
 * refuses it, records the `quota.exceeded` event through `notify` in a transaction of its own and
 * rethrows.
 */
export async function withRepoRefusalRecorded<T>(
  store: Pick<Store, "transaction">,
  notify: QuotaEventSink,
  args: { groupUid: string; repository: string },
  create: () => Promise<T>,
): Promise<T> {
  try {
    return await create();
  } catch (err) {
    if (!isRepoQuotaRefusal(err)) throw err;
    const orgUid = rootOf(args.groupUid);
    await store.transaction(async (tx) => {
      const row = await tx.usage.get(orgUid);
      await notify(tx, "exceeded", {
        orgUid,
        storageBytes: row?.storageBytes ?? 0,
        requestedBytes: 0,
        quotaStorageBytes: row?.quotaStorageBytes ?? 0,
        quotaRepoCount: row?.quotaRepoCount ?? 0,
        repository: args.repository,
        repoCount: await tx.usage.repoCount(orgUid),
      });
    });
    throw err;
  }
}
