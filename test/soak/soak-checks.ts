import type { ReceivedDelivery } from "../support/webhook-receiver.js";
import type { HaproxyLog } from "./haproxy.js";
import type { KillRecord } from "./replica-set.js";
import type { SoakClient } from "./soak-client.js";
import { sha256Of } from "./soak-client.js";
import type { AckChange, AckPush, OpRecord } from "./soak-load.js";

/** A check's outcome: what held, and every violation found (empty when it passed). */
export interface CheckResult {
  name: string;
  summary: string;
  violations: string[];
}

/**
 * Every acknowledged push pulls by tag with the acknowledged digest, every blob it references
 * reads back with its digest and size, its tag is listed and its history names the digest.
 */
export async function checkPushes(pushes: AckPush[], registry: SoakClient): Promise<CheckResult> {
  const violations: string[] = [];
  const blobsChecked = new Set<string>();
  const tagLists = new Map<string, Set<string>>();
  for (const push of pushes) {
    const ref = `${push.repo}:${push.tag}`;
    try {
      const manifest = await registry.request("check", `/v2/${push.repo}/manifests/${push.tag}`, {
        headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
        expect: [200],
      });
      if (sha256Of(manifest.body) !== push.digest) violations.push(`${ref}: tag answers other bytes`);
      for (const [digest, size] of push.blobs) {
        const key = `${push.repo}@${digest}`;
        if (blobsChecked.has(key)) continue;
        blobsChecked.add(key);
        const blob = await registry.request("check", `/v2/${push.repo}/blobs/${digest}`, { expect: [200] });
        if (sha256Of(blob.body) !== digest || blob.body.length !== size) {
          violations.push(`${ref}: blob ${digest} reads back wrong (${blob.body.length} bytes)`);
        }
      }
      let tags = tagLists.get(push.repo);
      if (tags === undefined) {
        const list = await registry.request("check", `/v2/${push.repo}/tags/list?n=100000`, {
          expect: [200],
        });
        tags = new Set((JSON.parse(list.body.toString()) as { tags: string[] | null }).tags ?? []);
        tagLists.set(push.repo, tags);
      }
      if (!tags.has(push.tag)) violations.push(`${ref}: not in tags/list`);
      const history = await registry.request("check", `/v2/${push.repo}/_service/history/${push.tag}`, {
        expect: [200],
      });
      const records = (JSON.parse(history.body.toString()) as { history: { digest: string }[] }).history;
      if (!records.some((h) => h.digest === push.digest))
        violations.push(`${ref}: history lacks ${push.digest}`);
    } catch (err) {
      violations.push(`${ref}: ${(err as Error).message}`);
    }
  }
  return {
    name: "acknowledged pushes",
    summary: `${pushes.length} pushes, ${blobsChecked.size} blobs verified by digest and size`,
    violations,
  };
}

/** Whether `delivery` is the push event of `push` (type, digest extension and tag in the body). */
function deliversPush(delivery: ReceivedDelivery, push: AckPush): boolean {
  if (delivery.headers["ce-type"] !== "dev.wharf.registry.push.v1") return false;
  if (delivery.headers["ce-digest"] !== push.digest) return false;
  try {
    return (JSON.parse(delivery.body) as { body?: { tag?: string } }).body?.tag === push.tag;
  } catch {
    return false;
  }
}

/** The acknowledged changes with no accepted delivery yet. */
export function undelivered(pushes: AckPush[], changes: AckChange[], accepted: ReceivedDelivery[]): string[] {
  const bySubject = new Map<string, ReceivedDelivery[]>();
  for (const d of accepted) {
    const key = String(d.headers["ce-subject"] ?? "");
    const list = bySubject.get(key) ?? [];
    list.push(d);
    bySubject.set(key, list);
  }
  const pushEvents = accepted.filter((d) => d.headers["ce-type"] === "dev.wharf.registry.push.v1");
  const missing: string[] = [];
  for (const push of pushes) {
    if (!pushEvents.some((d) => deliversPush(d, push))) missing.push(`push ${push.repo}:${push.tag}`);
  }
  const wanted = new Map<string, number>();
  for (const change of changes) {
    const key = `${change.type} ${change.subject}`;
    wanted.set(key, (wanted.get(key) ?? 0) + 1);
  }
  for (const [key, count] of wanted) {
    const [type, subject = ""] = key.split(" ");
    const got = (bySubject.get(subject) ?? []).filter((d) => d.headers["ce-type"] === type).length;
    if (got < count) missing.push(`${key}: ${got} of ${count} delivered`);
  }
  return missing;
}

/**
 * How long after a kill a request HAProxy never logged may still fail because of it: the killed
 * replica's cut response closes the client's keep-alive connection to HAProxy, and a request the
 * client had just written on that connection dies with it (Go clients such as skopeo and docker
 * retry those; fetch does not).
 */
export const CUT_CONNECTION_WINDOW_MS = 1000;

/**
 * How long after a kill HAProxy may still send a request to the dead replica: its health checks
 * (every 500 ms, two failures) take up to ~1 s to mark it down, and meanwhile a request may go out on
 * an idle keep-alive connection to it that HAProxy has not yet seen closed. GETs are retried on
 * another replica then (`retry-on empty-response`); other methods are not, since a request that
 * reached a replica may have taken effect.
 */
export const HEALTH_CHECK_WINDOW_MS = 1500;

/**
 * Attributes each failed operation:
 * - "killed replica, in flight": HAProxy logged its failing request on a replica killed while the
 *   operation ran; or, for a failure HAProxy did not log by id (skopeo), a kill happened while it ran;
 * - "killed replica, not yet out of rotation": HAProxy sent it to a replica killed within
 *   {@link HEALTH_CHECK_WINDOW_MS} before it started, and the replica's side ended it (`S…`);
 * - "killed replica, shared connection cut": a request HAProxy never received failed without an
 *   answer within {@link CUT_CONNECTION_WINDOW_MS} of a kill;
 * - anything else is unexplained.
 */
export function attributeFailures(
  records: OpRecord[],
  kills: KillRecord[],
  haproxy: HaproxyLog,
): { byCause: Map<string, number>; unexplained: string[] } {
  const byCause = new Map<string, number>();
  const unexplained: string[] = [];
  for (const record of records) {
    if (record.ok || !record.failure) continue;
    const { requestId, status } = record.failure;
    const logged = haproxy.logById.get(requestId);
    const during = kills.filter((k) => k.killedAt >= record.start && k.killedAt <= record.end);
    const justBefore = kills.filter(
      (k) => k.killedAt <= record.end && k.killedAt >= record.start - CUT_CONNECTION_WINDOW_MS,
    );
    let cause: string | undefined;
    if (logged !== undefined) {
      if (during.some((k) => k.replica === logged.server)) cause = "killed replica, in flight";
      else if (
        logged.termination.startsWith("S") &&
        kills.some(
          (k) =>
            k.replica === logged.server &&
            k.killedAt < record.start &&
            k.killedAt >= record.start - HEALTH_CHECK_WINDOW_MS,
        )
      )
        cause = "killed replica, not yet out of rotation";
    } else if (during.length > 0) cause = "killed replica, in flight";
    else if (requestId !== "" && status === 0 && justBefore.length > 0)
      cause = "killed replica, shared connection cut";
    const label = `${record.kind}: ${cause ?? "unexplained"}`;
    byCause.set(label, (byCause.get(label) ?? 0) + 1);
    if (cause === undefined) {
      const detail = logged ? ` [haproxy: ${logged.server} ${logged.status} ${logged.termination}]` : "";
      const nearest = kills.reduce(
        (best, k) => (Math.abs(k.killedAt - record.end) < Math.abs(best) ? k.killedAt - record.end : best),
        Number.POSITIVE_INFINITY,
      );
      unexplained.push(
        `${record.kind} ${record.failure.message}${detail} after ${record.end - record.start} ms; nearest kill ${nearest} ms from its end`,
      );
    }
  }
  return { byCause, unexplained };
}
