import type { PageTokenCodec } from "../core/list.js";
import type { EventRecorder } from "../events/event-recorder.js";
import type { SinkAddressPolicy } from "../events/sink-address-policy.js";
import type { SinkResolver } from "../events/sink-host.js";
import type { BlobDriver } from "../storage/blobs/blob-driver.js";
import type { Store } from "../storage/store.js";

/** What every service implementation is built from (the composition root provides it). */
export interface ServiceDeps {
  store: Store;
  /** Blob bytes (image configs, for ImagesService). */
  blobs: BlobDriver;
  pageTokens: PageTokenCodec;
  /**
   * Called after role bindings of `identityUid` change (or, without an argument, after a role's
   * capabilities change, which affects everyone bound to it), so cached grants are dropped at once.
   */
  bindingsChanged(identityUid?: string): void;
  /** Writes events into the outbox, in the transaction of the change they report. */
  events: EventRecorder;
  /** Whether subscriptions may have plain-http sinks on non-loopback hosts (default false). */
  allowHttpSinks?: boolean;
  /** Which addresses subscriptions' sinks may lead to; default: the policy without exceptions. */
  sinkAddresses?: SinkAddressPolicy;
  /** Resolves sink host names when a subscription is created; default: the system resolver. */
  resolveSinkHost?: SinkResolver;
  /** Ids of the legal documents the server offers (TermsService); default: DEFAULT_TERMS_DOCUMENTS. */
  termsDocuments?: readonly string[];
  /**
   * Name of the public namespace (`--public-namespace`): a reserved organization name that only the
   * platform administrator may give a root group (GroupsService).
   */
  publicNamespace: string;
}
