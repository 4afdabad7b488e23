import { isIP } from "node:net";
import { invalidArgument } from "../../core/errors.js";
import { REPOSITORY_PATH } from "../../core/registry-name.js";
import type { SinkAddressPolicy } from "../../events/sink-address-policy.js";
import { type SinkResolver, sinkHostOf } from "../../events/sink-host.js";

const MAX_URL_LENGTH = 2048;

/**
 * Checks the URL of another registry (an upstream's, a replication remote's) and returns it
 * normalised: `https://host[:port][/prefix]` (WHATWG serialisation of scheme and host, the default
 * port dropped, no trailing slash). `http` only when `allowHttp` (`--events-allow-http`), for
 * loopback hosts too; no credentials (they go in username and password, where the password is
 * sealed), no query, no fragment; a path prefix must be a repository path (`team/sub`).
 * INVALID_ARGUMENT on `field` otherwise.
 */
export function validateRegistryUrl(raw: string, allowHttp: boolean, field = "url"): string {
  if (raw === "") throw invalidArgument(field, `${field} is required`);
  if (raw.length > MAX_URL_LENGTH) {
    throw invalidArgument(field, `${field} must be at most ${MAX_URL_LENGTH} characters`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidArgument(
      field,
      `${field} must be an absolute https URL like https://registry.example (got "${raw.slice(0, 200)}")`,
    );
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw invalidArgument(field, `${field} must be an https URL (got scheme "${url.protocol.slice(0, -1)}")`);
  }
  if (url.protocol === "http:" && !allowHttp) {
    throw invalidArgument(
      field,
      `${field} must use https (plain http is allowed only when the server runs with --events-allow-http)`,
    );
  }
  // Credentials are refused without echoing the URL: it would carry them into the error.
  if (url.username !== "" || url.password !== "") {
    throw invalidArgument(field, `${field} must not carry credentials; set username and password instead`);
  }
  if (url.search !== "" || raw.includes("?")) throw invalidArgument(field, `${field} must not have a query`);
  if (url.hash !== "" || raw.includes("#")) throw invalidArgument(field, `${field} must not have a fragment`);
  const prefix = url.pathname.replace(/^\/+|\/+$/g, "");
  if (prefix !== "" && !REPOSITORY_PATH.test(prefix)) {
    throw invalidArgument(
      field,
      `${field}'s path "${prefix.slice(0, 200)}" must be a repository path prefix (lowercase components separated by "/")`,
    );
  }
  return `${url.protocol}//${url.host}${prefix === "" ? "" : `/${prefix}`}`;
}

/**
 * Checks where a registry URL (as validateRegistryUrl returned it) leads, as subscriptions' sinks
 * are checked: an address host must be allowed by `policy`, a name must resolve and every address
 * it resolves to must be allowed. INVALID_ARGUMENT on `field` naming the host, the refused address
 * and the flag that would allow it. Connections check again the address they reach (the name may
 * resolve elsewhere by then).
 */
export async function validateRegistryUrlAddresses(
  url: string,
  policy: SinkAddressPolicy,
  resolve: SinkResolver,
  field = "url",
): Promise<void> {
  const host = sinkHostOf(new URL(url));
  let addresses: string[];
  if (isIP(host) !== 0) addresses = [host];
  else {
    try {
      addresses = await resolve(host);
    } catch (err) {
      throw invalidArgument(field, unresolved(field, host, err));
    }
    if (addresses.length === 0) throw invalidArgument(field, unresolved(field, host));
  }
  for (const address of addresses) {
    const what = policy.refusalOf(address);
    if (what === undefined) continue;
    const where = isIP(host) !== 0 ? `is ${what}` : `resolves to ${address}, ${what}`;
    throw invalidArgument(
      field,
      `${field} host ${host} ${where}, which Wharf may not reach (the server's ${policy.exceptionFor(address)} can allow it)`,
    );
  }
}

function unresolved(field: string, host: string, err?: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  const why = typeof code === "string" ? ` (${code})` : "";
  return `${field} host ${host} does not resolve${why}; it must resolve to addresses Wharf may reach`;
}
