import { Code } from "@connectrpc/connect";
import type { Command } from "commander";
import type { Subscription } from "../../../gen/platform/events/v2/subscriptions_pb.js";
import { isWharfApiError } from "../../../sdk/errors.js";
import { listAll } from "../../../sdk/pages.js";
import type { CommandContext } from "../context.js";
import { CommandExit, EXIT } from "../exit-codes.js";
import { timeCell } from "../output.js";
import type { Bind } from "../program.js";
import { isTerminal, lineTicker, terminalBar } from "../progress.js";
import { groupUid } from "../resolve.js";

const LABEL = "wharf events deliveries wait";
/** How long `wait` waits without `--timeout`. */
export const DEFAULT_WAIT_MS = 5 * 60_000;
/** Time between two looks at the pending counts. */
export const WAIT_POLL_MS = 500;

const pendingOf = (s: Subscription) => Number(s.status?.pending ?? 0n);
const failedOf = (s: Subscription) => Number(s.status?.failed ?? 0n);
const sum = (subs: readonly Subscription[], of: (s: Subscription) => number) =>
  subs.reduce((total, s) => total + of(s), 0);

/**
 * The subscriptions watched, with their delivery status: the one named, else every one under
 * --parent, else every one visible. The status comes from GetSubscription (a list carries none).
 */
async function watched(ctx: CommandContext, o: Record<string, unknown>): Promise<Subscription[]> {
  const subscriptions = ctx.client.events.subscriptions;
  if (typeof o.subscription === "string")
    return [await subscriptions.getSubscription({ uid: o.subscription })];
  const request =
    typeof o.parent === "string" ? { uidp: { descendantsOf: await groupUid(ctx.client, o.parent) } } : {};
  const uids: string[] = [];
  for await (const s of listAll(subscriptions.listSubscriptions, request)) uids.push(s.uid);
  // One deleted meanwhile owes nothing any more (its deliveries went with it).
  const found = await Promise.all(
    uids.map((uid) =>
      subscriptions
        .getSubscription({ uid })
        .catch((err: unknown) =>
          isWharfApiError(err) && err.code === Code.NotFound ? undefined : Promise.reject(err),
        ),
    ),
  );
  return found.filter((s): s is Subscription => s !== undefined);
}

/** One line per subscription still owing deliveries: pending, given up, next retry. */
function stillPending(subs: readonly Subscription[]): string[] {
  return subs
    .filter((s) => pendingOf(s) > 0)
    .map((s) => {
      const retry = s.status?.retryTime ? `, next attempt ${timeCell(s.status.retryTime)}` : "";
      return `  ${s.uid} (${s.sink}): ${pendingOf(s)} pending, ${failedOf(s)} given up${retry}`;
    });
}

/**
 * Polls the watched subscriptions until none has a pending delivery (each delivered, or given up
 * on after the server's retry limit: a dead letter): exit 0. At `--timeout` (default 5m) it exits
 * 1 naming what is still pending. The pending count is shown falling: a bar on a terminal, a line
 * per change elsewhere.
 */
async function waitForDeliveries(ctx: CommandContext, o: Record<string, unknown>): Promise<void> {
  const deadline = Date.now() + (ctx.timeoutMs ?? DEFAULT_WAIT_MS);
  const bar = isTerminal(ctx.stderr) ? terminalBar(ctx.stderr, LABEL) : undefined;
  const ticker = lineTicker(WAIT_POLL_MS);
  let most = 0;
  let lastShown: number | undefined;
  try {
    for (;;) {
      const subs = await watched(ctx, o);
      const pending = sum(subs, pendingOf);
      most = Math.max(most, pending);
      const status = `${pending} pending`;
      const tail = `${most - pending}/${most} delivered or given up, ${sum(subs, failedOf)} given up in all`;
      if (bar) bar.show({ head: status, tail, done: most - pending, total: most });
      else if (pending !== lastShown || ticker.due()) {
        ctx.stderr.write(`${LABEL}: ${status} (${tail})\n`);
        ticker.reset();
      }
      lastShown = pending;
      if (pending === 0) {
        bar?.stop();
        ctx.stderr.write(
          `${LABEL}: nothing pending in ${subs.length} subscription${subs.length === 1 ? "" : "s"}\n`,
        );
        return;
      }
      if (Date.now() >= deadline) {
        bar?.stop();
        ctx.stderr.write(
          `wharf: timed out with ${pending} deliveries pending:\n${stillPending(subs).join("\n")}\n`,
        );
        throw new CommandExit(EXIT.error);
      }
      await new Promise((r) => setTimeout(r, Math.min(WAIT_POLL_MS, Math.max(0, deadline - Date.now()))));
    }
  } finally {
    bar?.stop();
  }
}

/** `wharf events deliveries wait`: see {@link waitForDeliveries}. */
export function registerDeliveriesWait(deliveries: Command, bind: Bind): void {
  deliveries
    .command("wait")
    .description(
      "wait until no delivery is pending (each delivered, or given up on after the retry limit); exit 0 when drained, 1 at --timeout (default 5m) naming what is still pending",
    )
    .option("--subscription <uid>", "only this subscription (default: every one you can see)")
    .option("--parent <group>", "only the subscriptions of this organization or folder")
    .action(bind((ctx, _args, o) => waitForDeliveries(ctx, o)));
}
