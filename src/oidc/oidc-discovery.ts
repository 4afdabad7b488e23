import { setBounded } from "../core/bounded-map.js";
import { isLoopbackHost } from "../core/loopback-host.js";
import { boundedGetJson, type FetchLimits } from "./bounded-fetch.js";
import { ExternalTokenError } from "./external-token-error.js";

/** The parts of an upstream issuer's OpenID Provider metadata Wharf uses. */
export interface UpstreamIssuerMetadata {
  /** Equal to the issuer URL it was fetched for, character for character. */
  issuer: string;
  jwks_uri: string;
  /** The whole document, for callers needing more (the login flow: authorization/token endpoints). */
  raw: Readonly<Record<string, unknown>>;
}

/** Fetches and caches upstream issuers' discovery documents. */
export interface OidcDiscovery {
  /**
   * The metadata of `issuer` (a URL the caller already decided to trust): GET
   * `<issuer>/.well-known/openid-configuration` within the fetch limits; its `issuer` must equal
   * `issuer` exactly and its `jwks_uri` must be an allowed URL (see `assertAllowedUrl`). Cached
   * for `ttlMs`; concurrent callers share one fetch; failures are not cached. Throws
   * ExternalTokenError.
   */
  get(issuer: string): Promise<UpstreamIssuerMetadata>;
}

/** Options of the discovery cache (and of the URL policy it applies). */
export interface OidcDiscoveryOptions extends FetchLimits {
  /** How long a fetched document is used. Default 10 minutes. */
  ttlMs?: number;
  /** Most issuers remembered at once (least recently fetched forgotten first). Default 1,000. */
  maxIssuers?: number;
  /** Accept `http:` issuers on any host (default: https, or http on loopback hosts only). */
  allowHttp?: boolean;
  /** Milliseconds now (the cache's clock). Default Date.now. */
  now?: () => number;
}

export const DISCOVERY_PATH = "/.well-known/openid-configuration";

/**
 * Throws ExternalTokenError unless `value` is an absolute `https:` URL without credentials or a
 * fragment, or an `http:` one on a loopback host (or on any host with `allowHttp`). `what` names
 * the URL in the message ("issuer", "jwks_uri").
 */
export function assertAllowedUrl(value: string, what: string, opts: { allowHttp?: boolean } = {}): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ExternalTokenError(`${what} ${JSON.stringify(value.slice(0, 200))} is not a URL`);
  }
  if (url.username !== "" || url.password !== "" || url.hash !== "") {
    throw new ExternalTokenError(`${what} ${value} must not carry credentials or a fragment`);
  }
  const secure = url.protocol === "https:";
  const plainAllowed = url.protocol === "http:" && (opts.allowHttp || isLoopbackHost(url.hostname));
  if (!secure && !plainAllowed) throw new ExternalTokenError(`${what} ${value} must be an https URL`);
  return url;
}

/** Creates a discovery cache. */
export function createOidcDiscovery(opts: OidcDiscoveryOptions = {}): OidcDiscovery {
  const ttlMs = opts.ttlMs ?? 10 * 60 * 1000;
  const maxIssuers = opts.maxIssuers ?? 1000;
  const now = opts.now ?? Date.now;
  const cache = new Map<string, { metadata: UpstreamIssuerMetadata; until: number }>();
  const inFlight = new Map<string, Promise<UpstreamIssuerMetadata>>();

  async function load(issuer: string): Promise<UpstreamIssuerMetadata> {
    assertAllowedUrl(issuer, "issuer", opts);
    const url = `${issuer.replace(/\/+$/, "")}${DISCOVERY_PATH}`;
    const doc = await boundedGetJson(url, opts);
    if (doc.issuer !== issuer) {
      throw new ExternalTokenError(`the discovery document of ${issuer} names another issuer`);
    }
    if (typeof doc.jwks_uri !== "string") {
      throw new ExternalTokenError(`the discovery document of ${issuer} has no jwks_uri`);
    }
    assertAllowedUrl(doc.jwks_uri, "jwks_uri", opts);
    const metadata: UpstreamIssuerMetadata = { issuer, jwks_uri: doc.jwks_uri, raw: Object.freeze(doc) };
    setBounded(cache, issuer, { metadata, until: now() + ttlMs }, maxIssuers);
    return metadata;
  }

  return {
    async get(issuer) {
      const hit = cache.get(issuer);
      if (hit && hit.until > now()) return hit.metadata;
      let pending = inFlight.get(issuer);
      if (!pending) {
        pending = load(issuer).finally(() => inFlight.delete(issuer));
        inFlight.set(issuer, pending);
      }
      return pending;
    },
  };
}
