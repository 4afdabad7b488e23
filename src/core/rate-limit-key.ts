import { isIPv6 } from "node:net";

/**
 * The one key function of rate limiting (ADR 0043), for the API and the registry alike: a
 * verified caller is limited by identity (`id:<identity uid>`, wherever it calls from); a caller
 * without one (no token, an anonymous registry token, a token that does not verify) by client
 * address (`ip:<address>`). An IPv6 address counts by its /64 network (one host usually holds a
 * whole /64, and could otherwise take a fresh bucket per address); an IPv4-mapped IPv6 address
 * (`::ffff:10.0.0.1`) as the IPv4 address. An unknown address (a socket already gone) is `ip:`.
 */
export function rateLimitKey(identityUid: string | undefined, clientAddress: string | undefined): string {
  if (identityUid !== undefined) return `id:${identityUid}`;
  return `ip:${addressKey(clientAddress ?? "")}`;
}

const IPV4_MAPPED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

function addressKey(address: string): string {
  const mapped = IPV4_MAPPED.exec(address);
  if (mapped) return mapped[1]!;
  const plain = address.split("%")[0]!; // a zone id (`fe80::1%eth0`) names no other host
  return isIPv6(plain) ? `${ipv6Network64(plain)}::/64` : address;
}

/** The first four groups of an IPv6 address, each in shortest hex (`2001:db8:0:1`). */
function ipv6Network64(address: string): string {
  const groupsOf = (part: string): string[] =>
    part === "" ? [] : part.split(":").flatMap((g) => (g.includes(".") ? ["0", "0"] : [g]));
  const gap = address.indexOf("::");
  let groups: string[];
  if (gap < 0) groups = groupsOf(address);
  else {
    const head = groupsOf(address.slice(0, gap));
    const tail = groupsOf(address.slice(gap + 2));
    groups = [...head, ...new Array<string>(8 - head.length - tail.length).fill("0"), ...tail];
  }
  return groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(":");
}
