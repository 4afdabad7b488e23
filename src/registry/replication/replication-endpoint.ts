import type { Readable } from "node:stream";

/** A manifest as a replication endpoint hands it out: verified bytes, their digest and media type. */
export interface EndpointManifest {
  digest: string;
  mediaType: string;
  content: Uint8Array;
}

/** A manifest whose subject is a given digest (a signature, an SBOM, a report). */
export interface EndpointReferrer {
  digest: string;
  mediaType: string;
  size: number;
}

/**
 * One side of a replication (Wharf's own content, or a remote registry) as the tag copy sees it:
 * the same operations whichever direction a rule copies, so one copy routine serves PUSH and PULL.
 * Repository names are full paths on that side (`acme/mirror/app` in Wharf, `mirror/app` on a
 * remote, relative to its URL's prefix). Every method honours `signal`.
 */
export interface ReplicationEndpoint {
  /** How failures name this side (the remote's URL, or "wharf"). */
  readonly label: string;
  /** The digest tag `tag` of `repo` names, or undefined (no such tag or repo). */
  tagDigest(repo: string, tag: string, signal: AbortSignal): Promise<string | undefined>;
  /** The manifest `reference` (tag or digest) of `repo`, or undefined when there is none. */
  manifest(repo: string, reference: string, signal: AbortSignal): Promise<EndpointManifest | undefined>;
  /** Whether `repo` holds manifest `digest`. */
  hasManifest(repo: string, digest: string, signal: AbortSignal): Promise<boolean>;
  /** Whether `repo` holds blob `digest`. */
  hasBlob(repo: string, digest: string, signal: AbortSignal): Promise<boolean>;
  /**
   * The bytes of blob `digest` (`size` bytes) of `repo`; the stream errors when they turn out
   * short or not to hash to `digest`.
   */
  openBlob(repo: string, digest: string, size: number, signal: AbortSignal): Promise<Readable>;
  /** Stores `size` bytes of blob `digest` from `body` in `repo` (creating it when needed), verified. */
  putBlob(repo: string, digest: string, size: number, body: Readable, signal: AbortSignal): Promise<void>;
  /** Links blob `digest` of `fromRepo` into `repo` without sending it; false when this side does not. */
  mountBlob(repo: string, digest: string, fromRepo: string, signal: AbortSignal): Promise<boolean>;
  /** Stores `manifest` in `repo` under `reference` (a tag, or its digest). */
  putManifest(
    repo: string,
    reference: string,
    manifest: EndpointManifest,
    signal: AbortSignal,
  ): Promise<void>;
  /** The manifests of `repo` whose subject is `digest` ([] when none, or when this side cannot tell). */
  referrers(repo: string, digest: string, signal: AbortSignal): Promise<EndpointReferrer[]>;
  /**
   * Told that referrer `referrer` of `subject` was just stored in `repo`: a side whose registry
   * offers no referrers API keeps the OCI 1.1 fallback tag (`sha256-<hex>`) up to date here.
   */
  referrerStored?(
    repo: string,
    subject: string,
    referrer: EndpointManifest,
    signal: AbortSignal,
  ): Promise<void>;
  /** Every tag of `repo`. */
  tags(repo: string, signal: AbortSignal): AsyncIterable<string>;
}
