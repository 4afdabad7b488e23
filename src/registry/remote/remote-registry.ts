import type { Readable } from "node:stream";
import type { Clock } from "../../core/clock.js";
import type { SinkAddressPolicy } from "../../events/sink-address-policy.js";
import type { SinkResolver } from "../../events/sink-host.js";

/**
 * The contract of Wharf's client for other registries (the OCI distribution API): what the
 * pull-through cache and replication use to reach an upstream or a remote. Implemented by
 * `createRemoteRegistry` (remote-client.ts). Every request passes the sink address policy (the
 * connection's resolved address is checked, redirects included), answers are size-capped, and
 * content is verified against its digest before it is handed on as good.
 */

/** Credentials of a remote registry: Basic, or exchanged for a Bearer token at the realm it names. */
export interface RemoteCredentials {
  username: string;
  password: string;
}

/** How to reach one remote registry. */
export interface RemoteRegistryOptions {
  /**
   * `https://host[:port][/prefix]` (http only with `allowHttp`). A path prefix is a repository
   * namespace: repo `app` of `https://r.example/team` is `team/app` on that registry.
   */
  url: string;
  /** Anonymous when omitted. The password is never logged nor put in an error message. */
  credentials?: RemoteCredentials | undefined;
  /** The webhook sinks' address policy and its exceptions (`--events-allow-loopback`, `--events-sink-allow`). */
  policy: SinkAddressPolicy;
  /** Whether plain-http URLs (and redirects to them) are allowed (`--events-allow-http`). */
  allowHttp: boolean;
  /** Name resolution (tests inject one); the system resolver by default. */
  resolve?: SinkResolver | undefined;
  clock: Clock;
  /** Largest manifest accepted (default MAX_MANIFEST_BYTES, 4 MiB). */
  maxManifestBytes?: number | undefined;
  /** Largest blob accepted (default: no limit beyond the declared size). */
  maxBlobBytes?: number | undefined;
  /** Per-request timeout for headers (default 30 s). */
  timeoutMs?: number | undefined;
  /** Entries asked per page of `tags` and `catalog` (`?n=`); the remote's default when omitted. */
  pageSize?: number | undefined;
}

/** A manifest fetched from a remote: verified against its digest. */
export interface RemoteManifest {
  digest: string;
  mediaType: string;
  content: Uint8Array;
}

/** What a manifest HEAD answers. */
export interface RemoteManifestHead {
  digest: string;
  mediaType: string;
  size: number;
}

/** An OCI descriptor as a referrers list names it. */
export interface RemoteDescriptor {
  mediaType: string;
  digest: string;
  size: number;
  artifactType?: string | undefined;
  annotations?: Record<string, string> | undefined;
}

/**
 * A blob being fetched. `body` yields exactly `size` bytes; it is destroyed with a RemoteError
 * (`digest-mismatch` or `truncated`) when the bytes do not hash to the digest asked for or stop
 * short, so a consumer that reads it to the end without an error has the right content.
 */
export interface RemoteBlob {
  size: number;
  body: Readable;
}

/** Why a remote call failed, for callers to decide (serve the cached copy, back off, report). */
export type RemoteErrorKind =
  /** DNS failure, connection refused or reset, timeout, 5xx. */
  | "unreachable"
  /** 401 after the credentials (or the token flow) were tried. */
  | "unauthorized"
  /** 403. */
  | "denied"
  /** 404 (or a NAME_UNKNOWN / MANIFEST_UNKNOWN / BLOB_UNKNOWN answer). */
  | "not-found"
  /** 429, or a request not sent because an earlier 429's Retry-After has not passed. */
  | "rate-limited"
  /** A manifest or blob larger than the limit. */
  | "too-large"
  /** Content that does not hash to its digest. */
  | "digest-mismatch"
  /** A body shorter than announced. */
  | "truncated"
  /** An answer that breaks the protocol (bad JSON, missing headers, too many redirects). */
  | "invalid-response"
  /** The URL, or a redirect, leads to an address the policy refuses (or plain http when not allowed). */
  | "address-refused"
  /** Any other 4xx (e.g. a quota refusal on push); `status` and the remote's message say which. */
  | "refused";

/** A failed remote call; `message` names the remote URL (never credentials) and what went wrong. */
export class RemoteError extends Error {
  override name = "RemoteError";
  constructor(
    readonly kind: RemoteErrorKind,
    message: string,
    readonly status?: number,
    /** For `rate-limited`: how long the remote asked to wait. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/**
 * One remote registry. Repository names are relative to the URL's prefix. Nothing is retried here
 * except the one request that follows an auth challenge: callers own retries and backoff. After a
 * 429, calls fail at once with `rate-limited` until its Retry-After (default 60 s) has passed.
 */
export interface RemoteRegistry {
  readonly url: string;
  /** The manifest `reference` (tag or digest) of `repo`, verified (digest reference, else Docker-Content-Digest when sent). */
  getManifest(repo: string, reference: string, signal?: AbortSignal): Promise<RemoteManifest>;
  /** HEAD of a manifest; undefined when the remote has none. */
  headManifest(
    repo: string,
    reference: string,
    signal?: AbortSignal,
  ): Promise<RemoteManifestHead | undefined>;
  /** Starts fetching blob `digest` of `repo` (following redirects under the address policy). */
  getBlob(repo: string, digest: string, signal?: AbortSignal): Promise<RemoteBlob>;
  /** Whether `repo` has blob `digest` (HEAD). */
  hasBlob(repo: string, digest: string, signal?: AbortSignal): Promise<boolean>;
  /** Mounts `digest` from `fromRepo` into `repo`; false when the remote does not (any upload it opened instead is cancelled). */
  mountBlob(repo: string, digest: string, fromRepo: string, signal?: AbortSignal): Promise<boolean>;
  /** Uploads `size` bytes of blob `digest` into `repo` (POST then PUT; chunked PATCH is not needed). */
  pushBlob(repo: string, digest: string, size: number, body: Readable, signal?: AbortSignal): Promise<void>;
  /** Puts a manifest under `reference` (tag or digest); resolves to the digest the remote answers. */
  putManifest(
    repo: string,
    reference: string,
    mediaType: string,
    content: Uint8Array,
    signal?: AbortSignal,
  ): Promise<string>;
  /** Every tag of `repo` (following `Link` pages); `not-found` when the repo does not exist. */
  tags(repo: string, signal?: AbortSignal): AsyncIterable<string>;
  /** Every repository of the catalog under the URL's prefix; `denied`/`not-found` when the remote does not offer one. */
  catalog(signal?: AbortSignal): AsyncIterable<string>;
  /** Manifests whose subject is `digest`: the referrers API, else the `sha256-<hex>` fallback tag; [] when none. */
  referrers(repo: string, digest: string, signal?: AbortSignal): Promise<RemoteDescriptor[]>;
  /** Closes idle connections. */
  close(): Promise<void>;
}
