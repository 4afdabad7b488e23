/** How a server stops on SIGTERM/SIGINT (issue 33): drain, then cut what is left. */
export interface ShutdownPlan {
  /**
   * How long `/readyz` answers 503 while everything else still serves, before the listeners stop
   * accepting (so a load balancer sees the server leave and stops sending it work).
   */
  delayMs: number;
  /**
   * Counted from the start of the shutdown: requests still running then are cut. The delay ends
   * at this deadline at the latest.
   */
  timeoutMs: number;
  /** Settles when the delay should end now (a second signal); its requests keep their deadline. */
  skipDelay?: Promise<unknown>;
}

/**
 * Waits out the plan's delay (until `skipDelay` settles, at most until the deadline), then
 * resolves to the grace period the in-flight requests have left: `timeoutMs` minus the time spent
 * since `startedAt` (a `performance.now()` reading), never below 0.
 */
export async function waitOutDelay(plan: ShutdownPlan, startedAt: number): Promise<number> {
  const delayMs = Math.min(plan.delayMs, plan.timeoutMs);
  if (delayMs > 0) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise((resolve) => {
        timer = setTimeout(resolve, delayMs);
      }),
      plan.skipDelay ?? new Promise(() => {}),
    ]);
    clearTimeout(timer);
  }
  return Math.max(0, Math.round(plan.timeoutMs - (performance.now() - startedAt)));
}
