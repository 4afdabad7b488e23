import { newChildUid } from "../../core/uidp.js";
import type { ReplicationRuleRow } from "../../storage/replication-store.js";
import type { Store } from "../../storage/store.js";
import { globMatcher } from "../tag-patterns.js";

/** Most due INTERVAL rules, and push events per organization, one poll takes on. */
const PER_POLL = 100;

/** Thrown inside a trigger transaction to roll it back: another process moved the cursor first. */
class CursorMoved extends Error {}

/**
 * Queues the runs of the INTERVAL rules due at `now`: each claimed in the database (claimDue), so
 * of several processes exactly one queues it, and its run queued in the same transaction. Returns
 * how many runs were queued.
 */
export async function fireDueIntervals(store: Store, now: number): Promise<number> {
  let queued = 0;
  for (const uid of await store.replication.dueRules(now, PER_POLL)) {
    const won = await store.transaction(async (tx) => {
      const rule = await tx.replication.getRule(uid);
      if (!rule?.enabled || rule.trigger !== "INTERVAL") return false;
      if (!(await tx.replication.claimDue(uid, now))) return false;
      await tx.replication.enqueueRun({
        uid: newChildUid(uid),
        ruleUid: uid,
        trigger: "INTERVAL",
        createTime: now,
      });
      return true;
    });
    if (won) queued++;
  }
  return queued;
}

/** What a push event's body says (the registry's push event). */
interface PushBody {
  repository?: unknown;
  tag?: unknown;
}

/** The repository and tag of a push event's data; undefined for a push by digest or bad data. */
function pushOf(data: string): { repository: string; tag: string } | undefined {
  try {
    const body = (JSON.parse(data) as { body?: PushBody }).body;
    if (typeof body?.repository !== "string" || typeof body.tag !== "string" || body.tag === "")
      return undefined;
    return { repository: body.repository, tag: body.tag };
  } catch {
    return undefined;
  }
}

/**
 * Whether `rule` fires on a push of `tag` to `repository` (an image path of its organization
 * `orgName`): the repo path below the organization matches repoPattern and the tag tagPattern.
 */
export function ruleMatchesPush(
  rule: Pick<ReplicationRuleRow, "repoPattern" | "tagPattern">,
  orgName: string,
  repository: string,
  tag: string,
): boolean {
  if (!repository.startsWith(`${orgName}/`)) return false;
  const path = repository.slice(orgName.length + 1);
  if (!globMatcher(rule.repoPattern === "" ? "**" : rule.repoPattern)(path)) return false;
  return rule.tagPattern === "" || globMatcher(rule.tagPattern)(tag);
}

/**
 * Queues the runs of ON_PUSH rules for the pushes in the outbox after each organization's cursor
 * (ADR 0054): the events are read, matched against the organization's enabled ON_PUSH rules (a
 * push by tag whose repo and tag match), and the cursor moves past them in the transaction that
 * queues the runs, with a compare-and-set, so a crash loses no push and two processes never
 * queue the same push twice (a loser rolls back and reads again next poll). Returns how many
 * runs were queued (coalesced ones included).
 */
export async function firePushTriggers(store: Store, now: number): Promise<number> {
  let queued = 0;
  for (const orgUid of await store.replication.pushCursorOrgs()) {
    const read = await store.replication.pushEvents(orgUid, PER_POLL);
    const last = read?.events.at(-1);
    if (!read || !last) continue;
    const org = await store.groups.get(orgUid);
    const rules = await store.replication.pushRules(orgUid);
    const firing = new Set<string>();
    for (const event of read.events) {
      const push = pushOf(event.data);
      if (!push || !org) continue;
      for (const rule of rules) {
        if (ruleMatchesPush(rule, org.name, push.repository, push.tag)) firing.add(rule.uid);
      }
    }
    try {
      await store.transaction(async (tx) => {
        if (!(await tx.replication.advancePushCursor(orgUid, read.cursor, last.seq))) throw new CursorMoved();
        for (const ruleUid of firing) {
          await tx.replication.enqueueRun({
            uid: newChildUid(ruleUid),
            ruleUid,
            trigger: "ON_PUSH",
            createTime: now,
          });
        }
      });
      queued += firing.size;
    } catch (err) {
      if (!(err instanceof CursorMoved)) throw err;
    }
  }
  return queued;
}
