import type { Readable } from "node:stream";
import { systemSinkResolver } from "../../events/sink-host.js";
import { MAX_MANIFEST_BYTES } from "../manifest-parser.js";
import { contentLength, readCapped } from "./capped-read.js";
import { nextLink } from "./link-header.js";
import { createRateLimitGate } from "./rate-limit-gate.js";
import { createRemoteAuthenticator, type ScopedRequest } from "./remote-auth.js";
import { errorForStatus, redactor } from "./remote-errors.js";
import {
  digestOfBytes,
  indexDescriptors,
  isGenericType,
  isIndexType,
  MANIFEST_ACCEPT,
  mediaTypeOf,
  verifiedManifest,
} from "./remote-manifests.js";
import { digestArgument, manifestReference, remoteRepo, repoPrefix } from "./remote-names.js";
import {
  type RemoteBlob,
  type RemoteDescriptor,
  RemoteError,
  type RemoteManifest,
  type RemoteManifestHead,
  type RemoteRegistry,
  type RemoteRegistryOptions,
} from "./remote-registry.js";
import {
  createRemoteTransport,
  discard,
  header,
  networkError,
  type RemoteResponse,
} from "./remote-transport.js";
import { verifiedBody } from "./verified-body.js";

/** Default per-request timeout for headers and between body chunks. */
export const DEFAULT_REMOTE_TIMEOUT_MS = 30_000;
/** Largest page of a tag list or catalog read. */
const MAX_LIST_PAGE_BYTES = 16 * 1024 * 1024;
/** Pages of one listing followed at most (a remote paging forever is cut off). */
const MAX_LIST_PAGES = 10_000;
const OCI_INDEX_TYPE = "application/vnd.oci.image.index.v1+json";

/**
 * A RemoteRegistry for `opts.url` (see remote-registry.ts for the contract). Never throws: a URL
 * that cannot be used (not http(s), plain http without `allowHttp`, credentials or a query in it,
 * a path that is not a repository prefix, a refused address) makes every call fail with
 * `address-refused`, without a request. Names and references that are not OCI names, tags or
 * sha256/sha512 digests fail with `refused`, without a request. An aborted `signal` rejects with
 * its reason (not a RemoteError). A blob's `body` holds its connection until read to the end or
 * destroyed. `close()` lets requests under way finish (each bounded by `timeoutMs`).
 */
export function createRemoteRegistry(opts: RemoteRegistryOptions): RemoteRegistry {
  const display = displayUrl(opts.url);
  const parsed = parseRegistryUrl(opts.url);
  const base = parsed?.base;
  const prefix = parsed?.prefix ?? "";
  const maxManifestBytes = opts.maxManifestBytes ?? MAX_MANIFEST_BYTES;
  const maxBlobBytes = opts.maxBlobBytes ?? Number.POSITIVE_INFINITY;
  const pageSize = opts.pageSize;
  const redact = redactor(
    opts.credentials
      ? [
          opts.credentials.password,
          Buffer.from(`${opts.credentials.username}:${opts.credentials.password}`).toString("base64"),
        ]
      : [],
  );
  const transport = createRemoteTransport({
    policy: opts.policy,
    resolve: opts.resolve ?? systemSinkResolver,
    allowHttp: opts.allowHttp,
    timeoutMs: opts.timeoutMs ?? DEFAULT_REMOTE_TIMEOUT_MS,
    gate: createRateLimitGate(opts.clock),
  });
  const auth = createRemoteAuthenticator({
    transport,
    credentials: opts.credentials,
    clock: opts.clock,
    redact,
  });

  const urlOf = (path: string): URL => {
    if (!base) {
      throw new RemoteError(
        "address-refused",
        `${display}: not a registry URL (https://host[:port][/prefix])`,
      );
    }
    return new URL(path, base);
  };
  const pull = (repo: string) => [`repository:${repo}:pull`];
  const push = (repo: string) => [`repository:${repo}:pull,push`];
  const send = (request: Omit<ScopedRequest, "follow"> & { follow?: boolean }) => auth.send(request);
  const fail = (what: string, res: RemoteResponse) => errorForStatus(what, res.status, res.body, redact);
  const mapError = (what: string, signal?: AbortSignal) => (err: unknown) => networkError(err, what, signal);

  const getManifest = async (
    repo: string,
    reference: string,
    signal?: AbortSignal,
  ): Promise<RemoteManifest> => {
    const what0 = `manifest of ${display}`;
    const full = remoteRepo(prefix, repo, what0);
    const what = `manifest ${full}${reference.includes(":") ? "@" : ":"}${reference} at ${display}`;
    const ref = manifestReference(reference, what);
    const res = await send({
      method: "GET",
      url: urlOf(`v2/${full}/manifests/${reference}`),
      headers: { accept: MANIFEST_ACCEPT },
      scopes: pull(full),
      follow: true,
      signal,
      what,
    });
    if (res.status !== 200) throw await fail(what, res);
    const declared = contentLength(header(res.headers, "content-length"));
    const bytes = await readCapped(res.body, maxManifestBytes, declared, what, mapError(what, signal));
    return verifiedManifest(
      bytes,
      header(res.headers, "content-type"),
      ref,
      header(res.headers, "docker-content-digest"),
      what,
    );
  };

  /** A HEAD of `path` in repo `full` (pull scope): its answer when 200, undefined when 404, else the failure. */
  const headOf = async (
    full: string,
    path: string,
    headers: Record<string, string>,
    what: string,
    signal: AbortSignal | undefined,
  ) => {
    const res = await send({
      method: "HEAD",
      url: urlOf(path),
      headers,
      scopes: pull(full),
      follow: true,
      signal,
      what,
    });
    if (res.status === 404) {
      discard(res.body);
      return undefined;
    }
    if (res.status !== 200) throw await fail(what, res);
    discard(res.body);
    return res;
  };

  const blobHead = async (full: string, digest: string, what: string, signal?: AbortSignal) => {
    const res = await headOf(full, `v2/${full}/blobs/${digest}`, {}, what, signal);
    return res && { size: contentLength(header(res.headers, "content-length")) };
  };

  const uploadSession = (location: string | undefined, from: URL, what: string): URL => {
    if (!location) throw new RemoteError("invalid-response", `${what}: no Location for the upload session`);
    try {
      return new URL(location, from);
    } catch {
      throw new RemoteError("invalid-response", `${what}: the upload Location is not a URL`);
    }
  };

  async function* listing(
    first: URL,
    key: "tags" | "repositories",
    scopes: string[],
    what: string,
    signal?: AbortSignal,
  ): AsyncGenerator<string> {
    const seen = new Set<string>();
    let url: URL | undefined = first;
    for (let page = 0; url; page++) {
      if (page >= MAX_LIST_PAGES || seen.has(url.href)) {
        throw new RemoteError("invalid-response", `${what}: the pages of the list do not end`);
      }
      seen.add(url.href);
      const res = await send({
        method: "GET",
        url,
        headers: { accept: "application/json" },
        scopes,
        signal,
        what,
      });
      if (res.status !== 200) throw await fail(what, res);
      const declared = contentLength(header(res.headers, "content-length"));
      const bytes = await readCapped(res.body, MAX_LIST_PAGE_BYTES, declared, what, mapError(what, signal));
      let names: unknown;
      try {
        names = (JSON.parse(bytes.toString("utf8")) as Record<string, unknown> | null)?.[key];
      } catch {
        throw new RemoteError("invalid-response", `${what}: the list is not JSON`);
      }
      if (names === null || names === undefined) names = [];
      if (!Array.isArray(names) || names.some((n) => typeof n !== "string")) {
        throw new RemoteError("invalid-response", `${what}: "${key}" is not a list of names`);
      }
      for (const name of names as string[]) yield name;
      const next = nextLink(res.headers.link, url);
      if (next && base && next.origin !== base.origin) {
        throw new RemoteError(
          "invalid-response",
          `${what}: the next page is on another host (${next.origin})`,
        );
      }
      url = next;
    }
  }

  return {
    url: display,
    getManifest,

    async headManifest(repo, reference, signal): Promise<RemoteManifestHead | undefined> {
      const full = remoteRepo(prefix, repo, `manifest of ${display}`);
      const what = `manifest ${full}${reference.includes(":") ? "@" : ":"}${reference} at ${display}`;
      const ref = manifestReference(reference, what);
      const res = await headOf(
        full,
        `v2/${full}/manifests/${reference}`,
        { accept: MANIFEST_ACCEPT },
        what,
        signal,
      );
      if (res === undefined) return undefined;
      const sent = header(res.headers, "docker-content-digest")?.trim();
      const size = contentLength(header(res.headers, "content-length"));
      const mediaType = mediaTypeOf(header(res.headers, "content-type"));
      if (sent !== undefined && ref.digest && sent !== ref.digest.value) {
        throw new RemoteError("digest-mismatch", `${what}: the remote names it ${sent.slice(0, 80)}`);
      }
      if (sent === undefined || size === undefined || isGenericType(mediaType)) {
        // Not enough said by the HEAD: the manifest itself tells (verified).
        try {
          const manifest = await getManifest(repo, reference, signal);
          return {
            digest: manifest.digest,
            mediaType: manifest.mediaType,
            size: manifest.content.byteLength,
          };
        } catch (err) {
          if (err instanceof RemoteError && err.kind === "not-found") return undefined;
          throw err;
        }
      }
      try {
        digestArgument(sent, what);
      } catch {
        throw new RemoteError(
          "invalid-response",
          `${what}: Docker-Content-Digest "${sent.slice(0, 80)}" is not a digest`,
        );
      }
      return { digest: sent, mediaType, size };
    },

    async getBlob(repo, digest, signal): Promise<RemoteBlob> {
      const full = remoteRepo(prefix, repo, `blob of ${display}`);
      const what = `blob ${full}@${digest} at ${display}`;
      const parsedDigest = digestArgument(digest, what);
      const res = await send({
        method: "GET",
        url: urlOf(`v2/${full}/blobs/${digest}`),
        headers: {},
        scopes: pull(full),
        follow: true,
        signal,
        what,
      });
      if (res.status !== 200) throw await fail(what, res);
      let size = contentLength(header(res.headers, "content-length"));
      if (size === undefined) {
        const head = await blobHead(full, digest, what, signal).catch((err: unknown) => {
          discard(res.body);
          throw err;
        });
        size = head?.size;
      }
      if (size === undefined) {
        discard(res.body);
        throw new RemoteError(
          "invalid-response",
          `${what}: no Content-Length, and its HEAD says no size either`,
        );
      }
      if (size > maxBlobBytes) {
        discard(res.body);
        throw new RemoteError("too-large", `${what}: ${size} bytes, more than the ${maxBlobBytes} accepted`);
      }
      return {
        size,
        body: verifiedBody(res.body, { digest: parsedDigest, size }, what, mapError(what, signal)),
      };
    },

    async hasBlob(repo, digest, signal) {
      const full = remoteRepo(prefix, repo, `blob of ${display}`);
      const what = `blob ${full}@${digest} at ${display}`;
      digestArgument(digest, what);
      return (await blobHead(full, digest, what, signal)) !== undefined;
    },

    async mountBlob(repo, digest, fromRepo, signal) {
      const full = remoteRepo(prefix, repo, `blob mount at ${display}`);
      const from = remoteRepo(prefix, fromRepo, `blob mount at ${display}`);
      const what = `mount of blob ${digest} from ${from} into ${full} at ${display}`;
      digestArgument(digest, what);
      const url = urlOf(`v2/${full}/blobs/uploads/`);
      url.searchParams.set("mount", digest);
      url.searchParams.set("from", from);
      const scopes = [...push(full), ...pull(from)];
      const res = await send({
        method: "POST",
        url,
        headers: { "content-length": "0" },
        scopes,
        signal,
        what,
      });
      if (res.status === 201) {
        discard(res.body);
        return true;
      }
      if (res.status !== 202) throw await fail(what, res);
      discard(res.body);
      // The remote opened an upload instead: cancel it (best effort, a stale session expires anyway).
      const session = uploadSession(header(res.headers, "location"), url, what);
      try {
        const cancelled = await send({ method: "DELETE", url: session, headers: {}, scopes, signal, what });
        discard(cancelled.body);
      } catch (err) {
        if (signal?.aborted) throw err;
      }
      return false;
    },

    async pushBlob(repo, digest, size, body: Readable, signal) {
      const full = remoteRepo(prefix, repo, `blob upload at ${display}`);
      const what = `upload of blob ${full}@${digest} at ${display}`;
      digestArgument(digest, what);
      const start = urlOf(`v2/${full}/blobs/uploads/`);
      const opened = await send({
        method: "POST",
        url: start,
        headers: { "content-length": "0" },
        scopes: push(full),
        signal,
        what,
      });
      if (opened.status !== 202) {
        body.destroy();
        throw await fail(what, opened);
      }
      discard(opened.body);
      const session = uploadSession(header(opened.headers, "location"), start, what);
      session.searchParams.set("digest", digest);
      // A failure of the caller's own stream is the caller's, not the remote's: it is rethrown as is.
      let bodyError: unknown;
      body.once("error", (err) => {
        bodyError = err;
      });
      const done = await send({
        method: "PUT",
        url: session,
        headers: { "content-type": "application/octet-stream", "content-length": String(size) },
        body,
        scopes: push(full),
        signal,
        what,
      }).catch((err: unknown) => {
        throw bodyError ?? err;
      });
      if (done.status !== 201) throw await fail(what, done);
      discard(done.body);
    },

    async putManifest(repo, reference, mediaType, content, signal) {
      const full = remoteRepo(prefix, repo, `manifest upload at ${display}`);
      const what = `upload of manifest ${full}${reference.includes(":") ? "@" : ":"}${reference} at ${display}`;
      const ref = manifestReference(reference, what);
      const res = await send({
        method: "PUT",
        url: urlOf(`v2/${full}/manifests/${reference}`),
        headers: { "content-type": mediaType, "content-length": String(content.byteLength) },
        body: content,
        scopes: push(full),
        signal,
        what,
      });
      if (res.status !== 201 && res.status !== 200) throw await fail(what, res);
      discard(res.body);
      const answered = header(res.headers, "docker-content-digest")?.trim();
      if (answered) {
        try {
          return digestArgument(answered, what).value;
        } catch {
          throw new RemoteError(
            "invalid-response",
            `${what}: Docker-Content-Digest "${answered.slice(0, 80)}" is not a digest`,
          );
        }
      }
      return ref.digest?.value ?? digestOfBytes(content, "sha256");
    },

    async *tags(repo, signal) {
      const full = remoteRepo(prefix, repo, `tags of ${display}`);
      const url = urlOf(`v2/${full}/tags/list`);
      if (pageSize !== undefined) url.searchParams.set("n", String(pageSize));
      yield* listing(url, "tags", pull(full), `tags of ${full} at ${display}`, signal);
    },

    async *catalog(signal) {
      const url = urlOf("v2/_catalog");
      if (pageSize !== undefined) url.searchParams.set("n", String(pageSize));
      const under = prefix === "" ? "" : `${prefix}/`;
      for await (const name of listing(
        url,
        "repositories",
        ["registry:catalog:*"],
        `catalog of ${display}`,
        signal,
      )) {
        if (name.startsWith(under)) yield name.slice(under.length);
      }
    },

    async referrers(repo, digest, signal): Promise<RemoteDescriptor[]> {
      const full = remoteRepo(prefix, repo, `referrers of ${display}`);
      const what = `referrers of ${full}@${digest} at ${display}`;
      const subject = digestArgument(digest, what);
      const res = await send({
        method: "GET",
        url: urlOf(`v2/${full}/referrers/${digest}`),
        headers: { accept: OCI_INDEX_TYPE },
        scopes: pull(full),
        follow: true,
        signal,
        what,
      });
      if (res.status === 200) {
        const declared = contentLength(header(res.headers, "content-length"));
        const bytes = await readCapped(res.body, maxManifestBytes, declared, what, mapError(what, signal));
        return indexDescriptors(bytes, what);
      }
      if (res.status !== 404) throw await fail(what, res);
      discard(res.body);
      // No referrers API: the tag schema's fallback tag (OCI distribution spec 1.1).
      const tag = `${subject.algorithm}-${subject.hex}`.slice(0, 128);
      try {
        const index = await getManifest(repo, tag, signal);
        return isIndexType(index.mediaType) ? indexDescriptors(index.content, what) : [];
      } catch (err) {
        if (err instanceof RemoteError && err.kind === "not-found") return [];
        throw err;
      }
    },

    close: () => transport.close(),
  };
}

/** The URL without credentials, query or fragment, for messages. */
function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/+$/, "")}`;
  } catch {
    return "(not a URL)";
  }
}

/** `https://host/prefix` → the origin (as base of `v2/…`) and the repository prefix; undefined when unusable. */
function parseRegistryUrl(url: string): { base: URL; prefix: string } | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.search !== "" || parsed.hash !== "" || parsed.username !== "" || parsed.password !== "")
    return undefined;
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return undefined;
  const prefix = repoPrefix(parsed);
  if (prefix === undefined) return undefined;
  return { base: new URL(`${parsed.origin}/`), prefix };
}
