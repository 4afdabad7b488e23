import type { LookupAddress } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import type { buildConnector as BuildConnector } from "undici";
import type { SinkAddressPolicy } from "./sink-address-policy.js";
import { type SinkResolver, sinkAddressRefusal, unresolvedSinkHost } from "./sink-host.js";
import { buildConnector } from "./undici-client.js";

/** A connection to a sink refused by the address policy; its message says why. */
export class SinkAddressRefused extends Error {
  override name = "SinkAddressRefused";
}

/**
 * An undici connector that checks the address it is about to connect to against `policy`: an
 * address host before connecting, a host name through the socket's own `lookup` (resolved with
 * `resolve`, every address must be allowed), so the address checked is the address used and a name
 * that resolves elsewhere since the subscription was created (DNS rebinding) is refused. A refused
 * connection fails with SinkAddressRefused before any packet is sent.
 */
export function createGuardedConnector(
  policy: SinkAddressPolicy,
  resolve: SinkResolver,
): BuildConnector.connector {
  const lookup: LookupFunction = (hostname, options, callback) => {
    resolve(hostname).then(
      (resolved) => {
        const refusal = sinkAddressRefusal(hostname, resolved, policy);
        if (refusal !== undefined) return callback(new SinkAddressRefused(refusal), "", 0);
        const wanted = familyOf(options.family);
        const addresses: LookupAddress[] = resolved
          .map((address) => ({ address, family: isIP(address) }))
          .filter((entry) => wanted === 0 || entry.family === wanted);
        const first = addresses[0];
        if (!first) {
          const err: NodeJS.ErrnoException = new Error(unresolvedSinkHost(hostname));
          err.code = "ENOTFOUND";
          return callback(err, "", 0);
        }
        if (options.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, "", 0),
    );
  };
  const connect = buildConnector({ lookup });
  return (options, callback) => {
    if (isIP(options.hostname) !== 0) {
      const refusal = sinkAddressRefusal(options.hostname, [options.hostname], policy);
      if (refusal !== undefined) return callback(new SinkAddressRefused(refusal), null);
    }
    connect(options, callback);
  };
}

function familyOf(family: number | string | undefined): 0 | 4 | 6 {
  if (family === 4 || family === "IPv4") return 4;
  if (family === 6 || family === "IPv6") return 6;
  return 0;
}
