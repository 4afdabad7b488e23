import type { PageTokenCodec } from "../../core/list.js";
import type { SecretBox } from "../../core/secret-box.js";
import type { EventRecorder } from "../../events/event-recorder.js";
import type { SinkAddressPolicy } from "../../events/sink-address-policy.js";
import type { SinkResolver } from "../../events/sink-host.js";
import type { Store } from "../../storage/store.js";

/** What the replication services are built from (the composition root provides it). */
export interface ReplicationDeps {
  /** Rules and runs (`store.replication`), the organizations they are under, and `transaction`. */
  store: Store;
  pageTokens: PageTokenCodec;
  /** Writes the rules' `replication_rule.*` events into the outbox, in the change's transaction. */
  events: EventRecorder;
  /** Seals the remotes' passwords (ADR 0051). */
  secrets: SecretBox;
  /** Whether remotes may be plain-http URLs of non-loopback hosts (`--events-allow-http`). */
  allowHttpSinks?: boolean | undefined;
  /** Which addresses remote URLs may lead to (the webhook sinks' policy); default: no exceptions. */
  sinkAddresses?: SinkAddressPolicy | undefined;
  /** Resolves remote host names when a rule is written; default: the system resolver. */
  resolveSinkHost?: SinkResolver | undefined;
  /** Told when a run was queued (the local worker then looks for runs at once). */
  queued?: (() => void) | undefined;
}

/** Replication's deps from the composition root's values (the secret box is the one upstreams use). */
export function replicationDepsOf(
  deps: Omit<ReplicationDeps, "queued"> & { replicationQueued?: (() => void) | undefined },
): ReplicationDeps {
  return { ...deps, queued: deps.replicationQueued };
}
