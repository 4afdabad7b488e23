import type { IncomingHttpHeaders } from "node:http";
import ipaddr from "ipaddr.js";

/**
 * The proxies whose `X-Forwarded-*` headers count (`--trust-proxy`): address ranges. Built by
 * {@link trustedProxies}; {@link NO_TRUSTED_PROXIES} trusts none (the default).
 */
export interface TrustedProxies {
  /** Whether `address` (an IP address; IPv4-mapped IPv6 counts as the IPv4 one) is in a trusted range. */
  trusts(address: string | undefined): boolean;
  /** The ranges, normalised (`10.0.0.0/8`, `fd00::/8`); empty = none. */
  readonly ranges: readonly string[];
}

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * The ranges of `cidrs` (`10.0.0.0/8`, `fd00::/8`; a bare address is a /32 or /128). Throws an
 * Error naming the first entry that is no CIDR or address.
 */
export function trustedProxies(cidrs: readonly string[]): TrustedProxies {
  const ranges: Range[] = cidrs.map((entry) => {
    const text = entry.trim();
    try {
      if (text.includes("/")) {
        const [addr, bits] = ipaddr.parseCIDR(text);
        return [
          unmapped(addr),
          addr.kind() === "ipv6" && unmapped(addr).kind() === "ipv4" ? bits - 96 : bits,
        ];
      }
      const addr = unmapped(ipaddr.parse(text));
      return [addr, addr.kind() === "ipv4" ? 32 : 128];
    } catch {
      throw new Error(`"${text}" is no CIDR (like 10.0.0.0/8 or fd00::/8) or IP address`);
    }
  });
  const normalised = ranges.map(([addr, bits]) => `${networkOf(addr, bits)}/${bits}`);
  return {
    ranges: normalised,
    trusts(address) {
      if (ranges.length === 0 || address === undefined) return false;
      const parsed = parseAddress(address);
      if (parsed === undefined) return false;
      return ranges.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits));
    },
  };
}

/** Trusts no proxy: the forwarded headers never count. */
export const NO_TRUSTED_PROXIES: TrustedProxies = trustedProxies([]);

/** What a request's client address and public origin are worked out from. */
export interface RequestFacts {
  /** The direct peer's address (`req.socket.remoteAddress`). */
  peer: string | undefined;
  headers: IncomingHttpHeaders;
}

/**
 * The address of the client behind a request. It is the direct peer's address, unless the peer
 * is a trusted proxy: then `X-Forwarded-For` is walked from the right (the hop the peer added),
 * skipping trusted proxies, and the first address that is not trusted is the client (all trusted:
 * the left-most). A malformed entry ends the walk at the hop to its right, which vouched for it.
 * IPv4-mapped IPv6 addresses are given as IPv4. "" when the socket has no address (closed).
 */
export function clientAddressOf(
  req: { socket?: { remoteAddress?: string | undefined } | null; headers: IncomingHttpHeaders },
  trust: TrustedProxies,
): string {
  return clientAddressFrom({ peer: req.socket?.remoteAddress, headers: req.headers }, trust);
}

/** {@link clientAddressOf} from the peer address and headers (an HTTP/2 stream has no `req`). */
export function clientAddressFrom(facts: RequestFacts, trust: TrustedProxies): string {
  const peer = normalise(facts.peer);
  if (peer === undefined) return facts.peer ?? "";
  if (!trust.trusts(peer)) return peer;
  const hops = listOf(facts.headers["x-forwarded-for"]);
  let client = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normalise(hops[i]);
    if (hop === undefined) break;
    client = hop;
    if (!trust.trusts(hop)) break;
  }
  return client;
}

/**
 * The origin (`https://registry.example.com`) the client addressed, as a trusted proxy forwarded
 * it in `X-Forwarded-Proto` and `X-Forwarded-Host` (the left-most value of each: the first
 * proxy's view); undefined when the direct peer is not trusted or neither header is there. A
 * missing one is taken from the request itself (`secure` for the scheme, `Host`/`:authority`); a
 * proto other than http/https or a malformed host makes it undefined.
 */
export function forwardedOriginOf(facts: RequestFacts & { secure: boolean }, trust: TrustedProxies) {
  if (!trust.trusts(normalise(facts.peer))) return undefined;
  const proto = listOf(facts.headers["x-forwarded-proto"])[0]?.toLowerCase();
  const forwardedHost = listOf(facts.headers["x-forwarded-host"])[0];
  if (proto === undefined && forwardedHost === undefined) return undefined;
  const scheme = proto ?? (facts.secure ? "https" : "http");
  const host = forwardedHost ?? facts.headers.host ?? facts.headers[":authority"];
  if ((scheme !== "http" && scheme !== "https") || typeof host !== "string" || !SANE_HOST.test(host))
    return undefined;
  return `${scheme}://${host.toLowerCase()}`;
}

/** A host name or IPv4 address, or a bracketed IPv6 address, and an optional port. */
const SANE_HOST = /^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/** The comma-separated values of a header (repeated headers joined), trimmed, empty ones dropped. */
function listOf(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value.join(",") : value)
    .split(",")
    .map((v) => v.trim())
    .filter((v) => v !== "");
}

function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (!ipaddr.isValid(bare)) return undefined;
  return unmapped(ipaddr.parse(bare));
}

/** The textual address, IPv4-mapped IPv6 given as IPv4; undefined when it is no address. */
function normalise(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  return parseAddress(text)?.toString();
}

function unmapped(addr: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return addr.kind() === "ipv6" && (addr as ipaddr.IPv6).isIPv4MappedAddress()
    ? (addr as ipaddr.IPv6).toIPv4Address()
    : addr;
}

function networkOf(addr: ipaddr.IPv4 | ipaddr.IPv6, bits: number): string {
  const bytes = addr.toByteArray();
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    bytes[i] = (bytes[i] ?? 0) & (0xff << (8 - keep)) & 0xff;
  }
  return ipaddr.fromByteArray(bytes).toString();
}
