import { BlockList, isIP } from "node:net";

/**
 * The operator's exceptions to the sink address policy, as plain data (it crosses to the delivery
 * thread): `allow` holds CIDRs normalised by parseCidr (`10.0.0.0/8`, `fd00::/8`).
 */
export interface SinkAddressOptions {
  /** Ranges sinks may reach although the policy refuses them (`--events-sink-allow`). */
  allow: readonly string[];
  /** Whether loopback addresses are allowed (`--events-allow-loopback`). */
  allowLoopback: boolean;
}

/** The strict policy: no exception. */
export const NO_SINK_EXCEPTIONS: SinkAddressOptions = { allow: [], allowLoopback: false };

/** Decides which IP addresses webhook deliveries may connect to. */
export interface SinkAddressPolicy {
  /**
   * Why `address` (an IPv4 or IPv6 address; an IPv6 zone id is ignored) is refused, as a phrase
   * ("a link-local address"), or undefined when it is allowed. Anything not an IP address is refused.
   */
  refusalOf(address: string): string | undefined;
  /** The setting that would open `address` (for messages): `--events-allow-loopback` or `--events-sink-allow`. */
  exceptionFor(address: string): string;
}

const METADATA = "a cloud metadata address";
const LOOPBACK = "a loopback address";

/**
 * Every refused range, first match wins (so the metadata addresses come before the link-local
 * range they sit in). Everything else is allowed, private ranges (10/8, 172.16/12, 192.168/16,
 * fc00::/7) included: on-premises receivers live there. IPv4-mapped IPv6 addresses
 * (`::ffff:169.254.169.254`) match their IPv4 range (BlockList treats them alike), and so do the
 * NAT64 forms (`64:ff9b::a9fe:a9fe`, RFC 6052), added below.
 */
const REFUSED_RANGES: readonly { cidr: string; what: string }[] = [
  // Instance metadata services: they hand the host's cloud credentials to any local caller.
  { cidr: "169.254.169.254/32", what: METADATA }, // AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle
  { cidr: "169.254.170.2/32", what: METADATA }, // AWS ECS task metadata and credentials
  { cidr: "fd00:ec2::254/128", what: METADATA }, // AWS IMDS over IPv6 (inside fc00::/7, else allowed)
  { cidr: "100.100.100.200/32", what: METADATA }, // Alibaba Cloud (inside 100.64/10, else allowed)
  // 0.0.0.0 and :: reach the host itself on Linux.
  { cidr: "0.0.0.0/8", what: "an unspecified address" },
  { cidr: "::/128", what: "an unspecified address" },
  { cidr: "127.0.0.0/8", what: LOOPBACK },
  { cidr: "::1/128", what: LOOPBACK },
  { cidr: "169.254.0.0/16", what: "a link-local address" },
  { cidr: "fe80::/10", what: "a link-local address" },
  { cidr: "224.0.0.0/4", what: "a multicast address" },
  { cidr: "ff00::/8", what: "a multicast address" },
  { cidr: "255.255.255.255/32", what: "the broadcast address" },
  { cidr: "240.0.0.0/4", what: "a reserved address" },
];

/** The NAT64 well-known prefix (RFC 6052): `64:ff9b::<IPv4>` reaches that IPv4 address through a gateway. */
const NAT64_PREFIX = "64:ff9b::";

/** A parsed CIDR: the address, its prefix length and family. */
export interface Cidr {
  address: string;
  prefix: number;
  family: "ipv4" | "ipv6";
}

/**
 * Parses `address/prefix` (IPv4 or IPv6) or a bare address (a /32 or /128); undefined when it is
 * not one (zone ids like `fe80::1%eth0` are refused: a range cannot name an interface).
 */
export function parseCidr(text: string): Cidr | undefined {
  const [address = "", prefixText, extra] = text.trim().split("/");
  const version = isIP(address);
  if (version === 0 || address.includes("%") || extra !== undefined) return undefined;
  const max = version === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (prefix > max) return undefined;
  return { address, prefix, family: version === 4 ? "ipv4" : "ipv6" };
}

/** `address/prefix` of a parsed CIDR. */
export function formatCidr(cidr: Cidr): string {
  return `${cidr.address}/${cidr.prefix}`;
}

function rangeList(cidrs: readonly Cidr[]): BlockList {
  const list = new BlockList();
  for (const { address, prefix, family } of cidrs) list.addSubnet(address, prefix, family);
  return list;
}

function mustParse(text: string): Cidr {
  const cidr = parseCidr(text);
  if (!cidr) throw new Error(`not a CIDR: "${text}"`);
  return cidr;
}

/** Each refused range as a BlockList, with its NAT64 form beside the IPv4 ones. */
const REFUSED = REFUSED_RANGES.map(({ cidr, what }) => {
  const parsed = mustParse(cidr);
  const ranges = [parsed];
  if (parsed.family === "ipv4") {
    ranges.push({ address: `${NAT64_PREFIX}${parsed.address}`, prefix: 96 + parsed.prefix, family: "ipv6" });
  }
  return { list: rangeList(ranges), what };
});

/**
 * The policy with the operator's exceptions: an address inside an `allow` range is allowed whatever
 * it is (listing `169.254.0.0/16` opens the metadata address too), loopback addresses are allowed
 * with `allowLoopback`, every other address in REFUSED_RANGES is refused. Throws on an `allow`
 * entry that is not a CIDR (the configuration checks them first).
 */
export function createSinkAddressPolicy(options: SinkAddressOptions): SinkAddressPolicy {
  const allowed = rangeList(options.allow.map(mustParse));
  const matchOf = (address: string) => {
    const version = isIP(address);
    const family = version === 4 ? "ipv4" : "ipv6";
    return version === 0 ? undefined : REFUSED.find((range) => range.list.check(address, family));
  };
  return {
    refusalOf(scoped) {
      // `fe80::1%eth0` is the address fe80::1 on one interface.
      const address = scoped.split("%")[0] ?? "";
      const version = isIP(address);
      if (version === 0) return "not an IP address";
      if (allowed.check(address, version === 4 ? "ipv4" : "ipv6")) return undefined;
      const what = matchOf(address)?.what;
      if (what === LOOPBACK && options.allowLoopback) return undefined;
      return what;
    },
    exceptionFor(address) {
      return matchOf(address.split("%")[0] ?? "")?.what === LOOPBACK
        ? "--events-allow-loopback"
        : "--events-sink-allow";
    },
  };
}
