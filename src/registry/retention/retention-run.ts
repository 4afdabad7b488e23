import { failedPrecondition, notFound } from "../../core/errors.js";
import { isAncestorOrSelf, newChildUid, selfAndAncestors } from "../../core/uidp.js";
import type { ChangeContext } from "../../events/event-recorder.js";
import type { RetentionPolicyRow, RetentionRunSummary } from "../../storage/retention-store.js";
import type { Store } from "../../storage/store.js";
import { deleteTagRecorded } from "../tag-deletion.js";
import { DEFAULT_RUN_LEASE_MS, type RetentionDeps } from "./retention-deps.js";
import { type JudgedTag, type Removal, tagsToRemove } from "./retention-rules.js";

/** A tag a run removes, with the image path of its repo ("acme/team/app"). */
export interface PlannedRemoval extends Removal {
  repoName: string;
}

/** One run's outcome: its summary (as kept in `lastRun`) and the tags it removed. */
export interface RunOutcome {
  summary: RetentionRunSummary;
  removed: PlannedRemoval[];
}

/**
 * Every tag under the policy's parent, judged: with its repo's path below the parent (for
 * repoPattern) and its image path (for answers).
 */
async function judgedTags(
  store: Store,
  policy: RetentionPolicyRow,
): Promise<(JudgedTag & { repoName: string })[]> {
  const candidates = await store.retention.candidates(policy.parentUid);
  const repoUids = [...new Set(candidates.map((c) => c.repoUid))];
  const repos = new Map(
    (await Promise.all(repoUids.map((uid) => store.repos.get(uid)))).flatMap((r) =>
      r ? [[r.uid, r] as const] : [],
    ),
  );
  const groupUids = [...new Set([...repos.values()].flatMap((r) => selfAndAncestors(r.groupUid)))];
  const groupNames = new Map((await store.groups.getMany(groupUids)).map((g) => [g.uid, g.name]));
  const pathOf = (groupUids: string[], repoName: string) =>
    [...groupUids.map((uid) => groupNames.get(uid) ?? "?"), repoName].join("/");
  return candidates.flatMap((c) => {
    const repo = repos.get(c.repoUid);
    if (!repo) return [];
    const groups = selfAndAncestors(repo.groupUid);
    const below = groups.filter((uid) => uid !== policy.parentUid && isAncestorOrSelf(policy.parentUid, uid));
    return [
      {
        ...c,
        repoPath: repo.uid === policy.parentUid ? "" : pathOf(below, repo.name),
        repoName: pathOf(groups, repo.name),
      },
    ];
  });
}

/**
 * What a run of `policy` would remove at `now`: the tags no rule keeps (tagsToRemove), less those
 * an immutability rule protects. Reads only.
 */
export async function planRemovals(
  deps: RetentionDeps,
  policy: RetentionPolicyRow,
  now: number,
): Promise<PlannedRemoval[]> {
  const tags = await judgedTags(deps.store, policy);
  const removals = tagsToRemove(policy.rules, tags, now);
  const out: PlannedRemoval[] = [];
  for (const removal of removals) {
    const tag = removal.tag as JudgedTag & { repoName: string };
    if (await deps.immutableRuleFor(deps.store, tag.repoUid, tag.name)) continue;
    out.push({ ...removal, repoName: tag.repoName });
  }
  return out;
}

/**
 * Runs policy `uid` once. The run first claims the policy in the database (RetentionStore.claimRun:
 * one run at a time across processes; with `scheduled`, only when due, moving its next run time
 * on); a manual run that finds another running is FAILED_PRECONDITION `RETENTION_RUN_IN_PROGRESS`,
 * a scheduled one resolves undefined. It then removes each planned tag exactly as DeleteTag does
 * (deleteTagRecorded: a history record and a `tag.deleted` event each, by `ctx.principal`), each
 * in its own transaction that re-checks that the tag still points at the digest judged and that no
 * immutability rule protects it (a tag moved or protected since is skipped). The deletes ignore
 * `ctx.signal`: a run started is finished. The summary goes to the policy's `lastRun`.
 */
export async function runPolicy(
  deps: RetentionDeps,
  ctx: ChangeContext,
  uid: string,
  scheduled: boolean,
): Promise<RunOutcome | undefined> {
  const policy = await deps.store.retention.get(uid);
  if (!policy) {
    if (scheduled) return undefined;
    throw notFound("retentionPolicy", uid);
  }
  const startTime = ctx.clock.now();
  const claimed = await deps.store.retention.claimRun(uid, {
    now: startTime,
    leaseUntil: startTime + (deps.runLeaseMs ?? DEFAULT_RUN_LEASE_MS),
    scheduled,
  });
  if (!claimed) {
    if (scheduled) return undefined;
    throw failedPrecondition(
      "RETENTION_RUN_IN_PROGRESS",
      `retention policy ${uid} is being run already; try again when that run has finished`,
      uid,
    );
  }
  try {
    const planned = await planRemovals(deps, policy, startTime);
    const writer = { principal: ctx.principal, clock: ctx.clock };
    const removed: PlannedRemoval[] = [];
    for (const removal of planned) {
      const { tag } = removal;
      const deleted = await deleteTagRecorded(deps, writer, tag.uid, async (tx, current) => {
        if (current.digest !== tag.digest) return false;
        return (await deps.immutableRuleFor(tx, tag.repoUid, tag.name)) === undefined;
      });
      if (deleted) removed.push(removal);
    }
    const summary: RetentionRunSummary = {
      uid: newChildUid(uid),
      startTime,
      endTime: ctx.clock.now(),
      deletedTags: removed.length,
      scheduled,
    };
    await deps.store.retention.finishRun(uid, summary);
    return { summary, removed };
  } catch (err) {
    await deps.store.retention.releaseRun(uid).catch(() => undefined);
    throw err;
  }
}
