import { Code } from "@connectrpc/connect";
import { errorOfResponse, WharfApiError } from "./errors.js";
import { bearer, type FetchFunction, fetchOrUnavailable, send, sendForJson } from "./http.js";
import { exchangeToken } from "./sts.js";
import { cachingTokenSource, type TokenSource } from "./token-sources.js";

/** Records per Tag History answer: a full answer means there may be more after it. */
export const TAG_HISTORY_WINDOW = 1000;

/** Registry tokens are reused until this close to their expiry (they live 5 minutes). */
const REGISTRY_TOKEN_MARGIN_MS = 30_000;

/** Media types a manifest HEAD accepts: OCI and Docker, images and indexes. */
export const MANIFEST_ACCEPT = [
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
  "application/vnd.docker.distribution.manifest.v2+json",
].join(", ");

/** One record of a tag's history: the tag pointed to `digest` from `updateTimestamp` on. */
export interface TagHistoryRecord {
  /** RFC 3339 with milliseconds, as the registry sends it. */
  updateTimestamp: string;
  /** "" for a deletion of the tag. */
  digest: string;
  /** True when the tag was deleted at that time. */
  deleted: boolean;
}

/** A record as the registry sends it (`deleted` only when true). */
interface WireRecord {
  updateTimestamp: string;
  digest: string;
  deleted?: boolean;
}

/** The window of {@link RegistryHelpers.tagHistory}: `start` inclusive, `end` exclusive. */
export interface TagHistoryWindow {
  start?: Date | string;
  end?: Date | string;
}

/** The registry helpers of a client (the registry speaks the OCI protocol, not Connect). */
export interface RegistryHelpers {
  /**
   * A registry token for `scope` (`repository:acme/app:pull`, several allowed), from the registry's
   * `/token` endpoint: the client's token is exchanged at the STS for one of the registry audience,
   * which the endpoint takes. Actions the caller may not do are left out of the token, as Docker's
   * token flow does. Without a token source, an anonymous token (public images only).
   */
  registryToken(scope: string | readonly string[]): Promise<string>;
  /**
   * Starts learning the registry's URL and exchanging the client's token for the registry audience
   * (what {@link resolve}, {@link tagHistory} and {@link referrers} send), so the first of them does
   * not wait for either. Never rejects: a failure shows in the call that needs the credential.
   */
  prepareRegistry(): void;
  /**
   * The digest `reference` (`acme/app:1.2`, `acme/app@sha256:…`, `acme/app` = `:latest`; a leading
   * registry host is dropped) points to now, from a manifest HEAD. NOT_FOUND when there is none.
   */
  resolve(reference: string): Promise<string>;
  /**
   * The history of `image:tag`, oldest first, in the window: every digest the tag pointed to and
   * its deletions, following the registry's windows of 1,000 records until the end.
   */
  tagHistory(
    image: string,
    tag: string,
    window?: TagHistoryWindow,
  ): AsyncGenerator<TagHistoryRecord, void, undefined>;
  /**
   * The manifests whose subject is `digest` in `image` (the OCI referrers API): signatures, SBOMs,
   * attestations, vulnerability reports. [] when there are none; NOT_FOUND for an unknown image.
   */
  referrers(image: string, digest: string): Promise<Referrer[]>;
}

/** One referrer of an image: a descriptor of the OCI referrers index. */
export interface Referrer {
  digest: string;
  mediaType: string;
  size: number;
  /** E.g. `application/vnd.dev.cosign.artifact.sig.v1+json`; "" when the manifest names none. */
  artifactType: string;
  annotations: Record<string, string>;
}

/** What the registry helpers are built from. */
export interface RegistryHelpersOptions {
  apiUrl: string;
  /** The registry's URL, or how to learn it. */
  registryUrl: () => Promise<string>;
  tokenSource: TokenSource | undefined;
  fetch: FetchFunction;
}

/** Builds the {@link RegistryHelpers} of a client. */
export function createRegistryHelpers(options: RegistryHelpersOptions): RegistryHelpers {
  const { apiUrl, tokenSource, fetch: fetchFn } = options;
  const platformToken =
    tokenSource &&
    cachingTokenSource(async () =>
      exchangeToken(apiUrl, await tokenSource.token(), { audience: [await options.registryUrl()] }, fetchFn),
    );
  const issued = new Map<string, { token: string; expiresAt: number }>();

  /**
   * The credential of a pull from `name`: the client's token re-issued for the registry audience,
   * which the registry takes as Bearer with the identity's current rights (one STS exchange per
   * token life, then no request of its own); anonymous callers get a pull token from `/token`.
   */
  function pullCredential(name: string): Promise<string> {
    return platformToken ? platformToken.token() : registryToken(`repository:${name}:pull`);
  }

  function prepareRegistry(): void {
    const warm = platformToken ? platformToken.token() : options.registryUrl();
    warm.catch(() => undefined);
  }

  async function registryToken(scope: string | readonly string[]): Promise<string> {
    const scopes = typeof scope === "string" ? [scope] : [...scope];
    const key = scopes.join(" ");
    const cached = issued.get(key);
    if (cached && cached.expiresAt - Date.now() > REGISTRY_TOKEN_MARGIN_MS) return cached.token;
    const registryUrl = await options.registryUrl();
    const url = new URL("/token", registryUrl);
    url.searchParams.set("service", url.host);
    for (const s of scopes) url.searchParams.append("scope", s);
    const credential = platformToken ? await platformToken.token() : "";
    const body = await sendForJson<{ token: string; expires_in: number }>(fetchFn, url, {
      method: "GET",
      headers: bearer(credential),
    });
    const now = Date.now();
    // Tokens are per scope: forget the expired ones, so a long-lived client does not collect them.
    for (const [scopeKey, entry] of issued) if (entry.expiresAt <= now) issued.delete(scopeKey);
    issued.set(key, { token: body.token, expiresAt: now + body.expires_in * 1000 });
    return body.token;
  }

  async function resolve(reference: string): Promise<string> {
    const { name, ref } = parseReference(reference, await options.registryUrl());
    const token = await pullCredential(name);
    const url = new URL(`/v2/${name}/manifests/${ref}`, await options.registryUrl());
    const response = await fetchOrUnavailable(fetchFn, url, {
      method: "HEAD",
      headers: { accept: MANIFEST_ACCEPT, ...bearer(token) },
    });
    if (!response.ok) {
      const error = await errorOfResponse(response);
      throw new WharfApiError({
        code: error.code,
        message: response.status === 404 ? `${reference} not found` : `${reference}: ${error.message}`,
        httpStatus: response.status,
      });
    }
    const digest = response.headers.get("docker-content-digest");
    if (!digest) {
      throw new WharfApiError({ code: Code.Internal, message: `${reference}: the registry sent no digest` });
    }
    return digest;
  }

  async function* tagHistory(
    image: string,
    tag: string,
    window: TagHistoryWindow = {},
  ): AsyncGenerator<TagHistoryRecord, void, undefined> {
    const registryUrl = await options.registryUrl();
    const name = parseReference(image, registryUrl).name;
    let start = window.start === undefined ? undefined : new Date(window.start).toISOString();
    const end = window.end === undefined ? undefined : new Date(window.end).toISOString();
    // Records at the `start` instant already yielded (a window may end inside one millisecond).
    let alreadySeen = 0;
    for (;;) {
      const url = new URL(`/v2/${name}/_service/history/${encodeURIComponent(tag)}`, registryUrl);
      if (start) url.searchParams.set("start", start);
      if (end) url.searchParams.set("end", end);
      const token = await pullCredential(name);
      const response = await send(fetchFn, url, { method: "GET", headers: bearer(token) });
      const { history } = (await response.json()) as { history: WireRecord[] };
      const records = history.slice(alreadySeen);
      for (const r of records) {
        yield { updateTimestamp: r.updateTimestamp, digest: r.digest, deleted: r.deleted === true };
      }
      if (history.length < TAG_HISTORY_WINDOW) return;
      const last = history[history.length - 1]?.updateTimestamp as string;
      const atLast = history.filter((r) => r.updateTimestamp === last).length;
      if (atLast === history.length) {
        throw new WharfApiError({
          code: Code.OutOfRange,
          message: `more than ${TAG_HISTORY_WINDOW} records of ${image}:${tag} share the time ${last}`,
        });
      }
      // The next window starts at the last record's instant, skipping the records of it seen here.
      alreadySeen = atLast;
      start = last;
    }
  }

  async function referrers(image: string, digest: string): Promise<Referrer[]> {
    const registryUrl = await options.registryUrl();
    const name = parseReference(image, registryUrl).name;
    const token = await pullCredential(name);
    const url = new URL(`/v2/${name}/referrers/${digest}`, registryUrl);
    const response = await send(fetchFn, url, {
      method: "GET",
      headers: { accept: "application/vnd.oci.image.index.v1+json", ...bearer(token) },
    });
    const index = (await response.json()) as { manifests?: Partial<Referrer>[] };
    return (index.manifests ?? []).map((m) => ({
      digest: m.digest ?? "",
      mediaType: m.mediaType ?? "",
      size: m.size ?? 0,
      artifactType: m.artifactType ?? "",
      annotations: m.annotations ?? {},
    }));
  }

  return { registryToken, prepareRegistry, resolve, tagHistory, referrers };
}

/**
 * Splits `acme/app:1.2` / `acme/app@sha256:…` / `registry.example.com/acme/app` into the repository
 * name and the tag or digest (`latest` when none); a leading host equal to the registry's is dropped.
 */
export function parseReference(reference: string, registryUrl: string): { name: string; ref: string } {
  let rest = reference;
  const host = new URL(registryUrl).host;
  if (rest.startsWith(`${host}/`)) rest = rest.slice(host.length + 1);
  const at = rest.indexOf("@");
  if (at >= 0) return { name: rest.slice(0, at), ref: rest.slice(at + 1) };
  const colon = rest.lastIndexOf(":");
  if (colon > rest.lastIndexOf("/")) return { name: rest.slice(0, colon), ref: rest.slice(colon + 1) };
  return { name: rest, ref: "latest" };
}
