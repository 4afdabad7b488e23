import type { DispatcherOptions } from "../../src/events/event-dispatcher.js";
import type { SinkResolver } from "../../src/events/sink-host.js";

/**
 * A resolver that answers from `table` (name → its addresses, or a function giving them at each
 * call, to change an answer over time); other names fail with ENOTFOUND. `calls` lists the names
 * asked for, in order. Tests simulate DNS with it: this machine has no DNS to change, and no test
 * may send traffic beyond loopback.
 */
export function fakeSinkResolver(
  table: Record<string, string[] | (() => string[])>,
): SinkResolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    const entry = table[hostname];
    if (entry === undefined) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    }
    return typeof entry === "function" ? entry() : entry;
  };
  return Object.assign(resolve, { calls });
}

/**
 * Dispatcher options of a server that never delivers (it leases no lane): for tests whose sinks
 * are not receivers (non-loopback addresses this machine must not send to).
 */
export const NO_DELIVERY: Partial<DispatcherOptions> = { concurrency: 0 };
