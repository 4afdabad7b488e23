import type { PageTokenCodec } from "../core/list.js";
import type { EventRecorder } from "../events/event-recorder.js";
import type { BlobDriver } from "../storage/blobs/blob-driver.js";
import type { Store } from "../storage/store.js";

/** What the registry services are built from (the composition root provides it). */
export interface RegistryServiceDeps {
  store: Store;
  /** Blob bytes (image configs, for ImagesService). */
  blobs: BlobDriver;
  pageTokens: PageTokenCodec;
  /** Writes events into the outbox, in the transaction of the change they report. */
  events: EventRecorder;
}
