import type { PageTokenCodec } from "../core/list.js";
import type { EventRecorder } from "../events/event-recorder.js";
import type { BlobDriver } from "../storage/blobs/blob-driver.js";
import type { Store } from "../storage/store.js";
import type { SignatureVerifier } from "./supply-chain/supply-chain.js";

/**
 * The sub-stores the registry services read: repos and tags, the parent groups of new repos, the
 * manifests ImagesService describes, the EOL data that marks tags deprecated, the immutability
 * rules, the usage a refused repo create reports, the upstreams whose namespaces
 * the API's CreateRepo refuses; and `transaction`,
 * where they write (its `tx` is the whole Store, the events are recorded in it).
 */
export type RegistryStores = Pick<
  Store,
  | "groups"
  | "repos"
  | "tags"
  | "manifests"
  | "eol"
  | "immutabilityRules"
  | "usage"
  | "upstreams"
  | "transaction"
>;

/** What the registry services are built from (the composition root provides it). */
export interface RegistryServiceDeps {
  store: RegistryStores;
  /** Blob bytes (image configs, for ImagesService). */
  blobs: BlobDriver;
  pageTokens: PageTokenCodec;
  /** Writes events into the outbox, in the transaction of the change they report. */
  events: EventRecorder;
  /** Verifies image signatures (a tag's verified signers); tags show none without it. */
  signatures?: SignatureVerifier | undefined;
}
