import { isIP } from "node:net";
import { invalidArgument } from "../core/errors.js";
import { isLoopbackHost } from "../core/loopback-host.js";
import type { SinkAddressPolicy } from "./sink-address-policy.js";
import { type SinkResolver, sinkAddressRefusal, sinkHostOf, unresolvedSinkHost } from "./sink-host.js";

const MAX_SINK_LENGTH = 2048;

/**
 * Checks a subscription's sink and returns it normalised (WHATWG URL serialisation): an absolute
 * `https` URL, or `http` when its host is loopback or `allowHttp` is set; no credentials (they
 * would be stored and shown in clear) and no fragment. INVALID_ARGUMENT on `sink` otherwise.
 */
export function validateSink(sink: string, allowHttp: boolean): string {
  if (sink === "") throw invalidArgument("sink", "sink is required");
  if (sink.length > MAX_SINK_LENGTH) {
    throw invalidArgument("sink", `sink must be at most ${MAX_SINK_LENGTH} characters`);
  }
  let url: URL;
  try {
    url = new URL(sink);
  } catch {
    throw invalidArgument("sink", `sink must be an absolute http(s) URL (got "${sink}")`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw invalidArgument("sink", `sink must be an http(s) URL (got scheme "${url.protocol.slice(0, -1)}")`);
  }
  if (url.protocol === "http:" && !allowHttp && !isLoopbackHost(url.hostname)) {
    throw invalidArgument(
      "sink",
      "sink must use https (plain http is allowed only for loopback hosts unless the server runs with --events-allow-http)",
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw invalidArgument(
      "sink",
      "sink must not carry credentials; receivers verify the signed Authorization header",
    );
  }
  if (url.hash !== "") throw invalidArgument("sink", "sink must not have a fragment");
  return url.href;
}

/**
 * Checks where a sink (as validateSink returned it) leads: an address host must be allowed by
 * `policy`, a name must resolve with `resolve` and every address it resolves to must be allowed.
 * INVALID_ARGUMENT on `sink` saying why otherwise. Delivery checks again the address it connects
 * to (guarded-connector.ts), as the name may resolve elsewhere by then.
 */
export async function validateSinkAddresses(
  sink: string,
  policy: SinkAddressPolicy,
  resolve: SinkResolver,
): Promise<void> {
  const host = sinkHostOf(new URL(sink));
  let addresses: string[];
  if (isIP(host) !== 0) addresses = [host];
  else {
    try {
      addresses = await resolve(host);
    } catch (err) {
      throw invalidArgument("sink", unresolvedSinkHost(host, err));
    }
    if (addresses.length === 0) throw invalidArgument("sink", unresolvedSinkHost(host));
  }
  const refusal = sinkAddressRefusal(host, addresses, policy);
  if (refusal !== undefined) throw invalidArgument("sink", refusal);
}
