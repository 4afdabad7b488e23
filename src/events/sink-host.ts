import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import type { SinkAddressPolicy } from "./sink-address-policy.js";

/**
 * Resolves a sink's host name to every address it has (IPv4 and IPv6). Rejects when the name does
 * not resolve. The server uses systemSinkResolver; tests pass their own to simulate DNS.
 */
export type SinkResolver = (hostname: string) => Promise<string[]>;

/** The system resolver (getaddrinfo: /etc/hosts, then DNS), as connections use it by default. */
export const systemSinkResolver: SinkResolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/** The host of a sink URL as an address or name: `[::1]` → `::1`. */
export function sinkHostOf(url: URL): string {
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Why a sink whose host is `host` may not be reached at `addresses` (every one must be allowed),
 * as a message naming the host, the refused address and the setting that would open it; undefined
 * when all are allowed.
 */
export function sinkAddressRefusal(
  host: string,
  addresses: readonly string[],
  policy: SinkAddressPolicy,
): string | undefined {
  for (const address of addresses) {
    const what = policy.refusalOf(address);
    if (what === undefined) continue;
    const where = isIP(host) !== 0 ? `is ${what}` : `resolves to ${address}, ${what}`;
    return `sink host ${host} ${where}, which webhooks may not reach (the server's ${policy.exceptionFor(address)} can allow it)`;
  }
  return undefined;
}

/**
 * The message for a sink host that does not resolve (no address, or the resolver's error code).
 */
export function unresolvedSinkHost(host: string, err?: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  const why = typeof code === "string" ? ` (${code})` : "";
  return `sink host ${host} does not resolve${why}; it must resolve to addresses webhooks may reach`;
}
