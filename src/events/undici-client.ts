/**
 * The undici package (webhook delivery's HTTP client), loaded without taking over `fetch`.
 *
 * Loading undici 7 installs its own Agent as the process's global dispatcher when none is set
 * yet, and Node 20's built-in `fetch` then sends through that Agent, which refuses requests Node's
 * own fetch builds (a `content-length` header set by the caller: "invalid content-length header").
 * Whether that happened depended on whether anything had fetched before this module loaded. So
 * Node's dispatcher is made first and left in place: `fetch` keeps Node's own, and deliveries use
 * the Agents they create themselves (test/unit/events/undici-client.test.ts checks it).
 */
const DISPATCHER_SYMBOLS = [Symbol.for("undici.globalDispatcher.1"), Symbol.for("undici.globalDispatcher.2")];
const globals = globalThis as unknown as Record<symbol, unknown>;
// Node creates fetch's dispatcher when its fetch implementation first loads, which using any of
// its classes does: have it in place before undici looks for one.
new Headers();
const before = DISPATCHER_SYMBOLS.map((symbol) => globals[symbol]);
const undici = await import("undici");
DISPATCHER_SYMBOLS.forEach((symbol, i) => {
  // undici defines them writable (not configurable), so they can be set back.
  if (globals[symbol] !== before[i]) globals[symbol] = before[i];
});

export const { Agent, buildConnector } = undici;
export type { Dispatcher } from "undici";
