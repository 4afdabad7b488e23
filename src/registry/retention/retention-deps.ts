import type { PageTokenCodec } from "../../core/list.js";
import type { EventRecorder } from "../../events/event-recorder.js";
import type { Store } from "../../storage/store.js";
import { immutableRuleFor } from "../immutability/immutable-rule-for.js";

/**
 * The immutability rule that protects tag `tagName` of repo `repoUid`, read in `tx` (the run's
 * delete transaction, or the store for a preview); undefined when no rule does. Retention never
 * removes a protected tag.
 */
export type ImmutabilityCheck = (
  tx: Store,
  repoUid: string,
  tagName: string,
) => Promise<{ uid: string } | undefined>;

/** What retention is built from (the composition root provides it). */
export interface RetentionDeps {
  /** Policies, the tags they judge and the groups and repos naming them; deletes run in `transaction`. */
  store: Store;
  pageTokens: PageTokenCodec;
  /** Writes the policies' events and each removed tag's `tag.deleted` event into the outbox. */
  events: EventRecorder;
  /** Which tags immutability rules protect. */
  immutableRuleFor: ImmutabilityCheck;
  /** How long a run may hold its policy before another process may run it (ms; default 15 min). */
  runLeaseMs?: number;
}

/** A run holds its policy this long by default: a crashed process's run is taken over after it. */
export const DEFAULT_RUN_LEASE_MS = 15 * 60_000;

/** Retention's deps from the composition root's values, with the registry's immutability check. */
export function retentionDepsOf(deps: Pick<RetentionDeps, "store" | "pageTokens" | "events">): RetentionDeps {
  return { store: deps.store, pageTokens: deps.pageTokens, events: deps.events, immutableRuleFor };
}
