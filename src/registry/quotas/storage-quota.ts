import type { Principal } from "../../core/context.js";
import { rootOf } from "../../core/uidp.js";
import type { ChangeContext, EventRecorder } from "../../events/event-recorder.js";
import { QuotaNoticeSchema } from "../../gen/platform/registry/v2/quotas_pb.js";
import type { ManifestReference } from "../../storage/registry-store.js";
import type { Store } from "../../storage/store.js";
import type { OrgUsageRow } from "../../storage/usage-store.js";
import { EMPTY_BLOB_CONTENT, EMPTY_BLOB_DIGEST } from "../manifest-parser.js";
import { QuotaExceededError, type QuotaNoticeFacts } from "./quota-errors.js";

/** Usage at or above this share of the storage quota is worth a warning event. */
export const WARNING_SHARE = 0.8;

/** Records a quota event (`warning` or `exceeded`) in transaction `tx`. */
export type QuotaEventSink = (
  tx: Store,
  verb: "warning" | "exceeded",
  notice: QuotaNoticeFacts,
) => Promise<void>;

/** The sink that records quota events as `dev.wharf.api.registry.quota.<verb>.v1` by `ctx`'s caller. */
export function quotaEventSink(events: EventRecorder, ctx: ChangeContext): QuotaEventSink {
  return (tx, verb, notice) =>
    events.change(tx, ctx, {
      resource: "quota",
      verb,
      subject: notice.orgUid,
      group: notice.orgUid,
      schema: QuotaNoticeSchema,
      body: {
        groupUid: notice.orgUid,
        storageBytes: BigInt(notice.storageBytes),
        requestedBytes: BigInt(notice.requestedBytes),
        quota: { storageBytes: BigInt(notice.quotaStorageBytes), repoCount: BigInt(notice.quotaRepoCount) },
        repository: notice.repository,
        ...(notice.repoCount === undefined ? {} : { repoCount: BigInt(notice.repoCount) }),
      },
    });
}

/** The principal to name as the actor of a registry write known only by its identity uid. */
export function principalOf(identityUid: string): Principal {
  return { identityUid, isAdmin: false, claims: {} };
}

/** The organization's row when it has a storage quota, locked for the rest of `tx`; else undefined. */
async function limitedUsage(tx: Store, orgUid: string): Promise<OrgUsageRow | undefined> {
  // Most organizations have no quota: one indexed read tells, and takes no lock.
  const row = await tx.usage.get(orgUid);
  if (!row || row.quotaStorageBytes === 0) return undefined;
  // Serializes the organization's pushes while a quota applies, so two cannot both fit the last bytes.
  return (await tx.usage.get(orgUid, { forUpdate: true })) ?? row;
}

async function refuse(
  tx: Store,
  row: OrgUsageRow,
  requestedBytes: number,
  repository: string,
): Promise<never> {
  const org = await tx.groups.get(row.orgUid);
  throw new QuotaExceededError(org?.name ?? row.orgUid, {
    orgUid: row.orgUid,
    storageBytes: row.storageBytes,
    requestedBytes,
    quotaStorageBytes: row.quotaStorageBytes,
    quotaRepoCount: row.quotaRepoCount,
    repository,
  });
}

/**
 * Called in a manifest commit's transaction before the manifest is stored: throws
 * QuotaExceededError when storing it (and the blobs it references that its organization does not
 * count yet) would take the organization past its storage quota; else, when the push takes usage
 * from below 80 % of the quota to at least 80 %, records the warning event through `notify`.
 * Organizations without a quota cost one indexed read.
 */
export async function admitManifest(
  tx: Store,
  args: {
    repoUid: string;
    repository: string;
    digest: string;
    size: number;
    references: readonly ManifestReference[];
    notify?: QuotaEventSink | undefined;
  },
): Promise<void> {
  const row = await limitedUsage(tx, rootOf(args.repoUid));
  if (!row || (await tx.manifests.has(args.repoUid, args.digest))) return;
  const blobs = [...new Set(args.references.filter((r) => r.kind === "blob").map((r) => r.digest))];
  const counted = await tx.usage.counted(row.orgUid, [args.digest, ...blobs]);
  let added = counted.has(args.digest) ? 0 : args.size;
  for (const digest of blobs) {
    if (counted.has(digest) || digest === args.digest) continue;
    const blob = await tx.blobs.get(digest);
    added += blob?.size ?? (digest === EMPTY_BLOB_DIGEST ? EMPTY_BLOB_CONTENT.byteLength : 0);
  }
  await admit(tx, row, added, args.repository, args.notify);
}

/**
 * Called in a blob commit's transaction before the blob is recorded: throws QuotaExceededError
 * when the blob, not yet counted in its organization, would take it past its storage quota. A blob
 * counts only once a manifest references it, so an admitted blob changes no usage by itself.
 */
export async function admitBlob(
  tx: Store,
  args: { repoUid: string; repository: string; digest: string; size: number },
): Promise<void> {
  const row = await limitedUsage(tx, rootOf(args.repoUid));
  if (!row || (await tx.usage.counted(row.orgUid, [args.digest])).size > 0) return;
  if (row.storageBytes + args.size > row.quotaStorageBytes) await refuse(tx, row, args.size, args.repository);
}

async function admit(
  tx: Store,
  row: OrgUsageRow,
  added: number,
  repository: string,
  notify: QuotaEventSink | undefined,
): Promise<void> {
  if (added === 0) return;
  const after = row.storageBytes + added;
  if (after > row.quotaStorageBytes) await refuse(tx, row, added, repository);
  const threshold = row.quotaStorageBytes * WARNING_SHARE;
  if (notify && row.storageBytes < threshold && after >= threshold) {
    await notify(tx, "warning", {
      orgUid: row.orgUid,
      storageBytes: after,
      requestedBytes: added,
      quotaStorageBytes: row.quotaStorageBytes,
      quotaRepoCount: row.quotaRepoCount,
      repository,
    });
  }
}

/**
 * Runs `push` (a write in its own transaction); when it throws QuotaExceededError, records the
 * `exceeded` event through `notify` in a transaction of its own (the push's rolled back) and
 * rethrows.
 */
export async function withRefusalRecorded<T>(
  store: Store,
  notify: QuotaEventSink | undefined,
  push: () => Promise<T>,
): Promise<T> {
  try {
    return await push();
  } catch (err) {
    if (err instanceof QuotaExceededError && notify) {
      await store.transaction((tx) => notify(tx, "exceeded", err.notice));
    }
    throw err;
  }
}
