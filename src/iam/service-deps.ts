import type { PageTokenCodec } from "../core/list.js";
import type { EventRecorder } from "../events/event-recorder.js";
import type { Store } from "../storage/store.js";

/**
 * The sub-stores the IAM services read and write: their own rows, and `transaction`. A transaction's
 * `tx` is the whole Store (its events are recorded in it, and a group delete also checks the group's
 * subscriptions through it).
 */
export type IamStores = Pick<
  Store,
  | "groups"
  | "identities"
  | "roles"
  | "roleBindings"
  | "identityProviders"
  | "accountAssociations"
  | "groupInvites"
  | "externalGroupRoleMappings"
  | "termsAcceptances"
  | "transaction"
>;

/** What the IAM services are built from (the composition root provides it). */
export interface IamServiceDeps {
  store: IamStores;
  pageTokens: PageTokenCodec;
  /**
   * Called after role bindings of `identityUid` change (or, without an argument, after a role's
   * capabilities change, which affects everyone bound to it), so cached grants are dropped at once.
   */
  bindingsChanged(identityUid?: string): void;
  /** Writes events into the outbox, in the transaction of the change they report. */
  events: EventRecorder;
  /** Ids of the legal documents the server offers (TermsService); default: DEFAULT_TERMS_DOCUMENTS. */
  termsDocuments?: readonly string[];
  /**
   * Name of the public namespace (`--public-namespace`): a reserved organization name that only the
   * platform administrator may give a root group (GroupsService).
   */
  publicNamespace: string;
}
