import { invalidArgument } from "../core/errors.js";
import { isLoopbackHost } from "../federation/oidc-discovery.js";

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
