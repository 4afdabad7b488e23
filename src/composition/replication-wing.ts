import type { WharfConfig } from "../config/config.js";
import type { Clock } from "../core/clock.js";
import type { SecretBox } from "../core/secret-box.js";
import { createSinkAddressPolicy, NO_SINK_EXCEPTIONS } from "../events/sink-address-policy.js";
import type { ReplicationMetrics } from "../observability/replication-metrics.js";
import type { RegistryDeps } from "../oci/registry-request.js";
import { createRemoteRegistry } from "../registry/remote/remote-client.js";
import type { ReplicationCopier } from "../registry/replication/replication-contract.js";
import { createReplicationCopier } from "../registry/replication/replication-copier.js";
import {
  type ReplicationWorker,
  startReplicationWorker,
} from "../registry/replication/replication-worker.js";
import type { UpstreamDirectory } from "../registry/upstreams/upstream-directory.js";
import type { Store } from "../storage/store.js";
import type { Delivery } from "./delivery-wing.js";

/** Replication tunables for tests and embedding (the CLI uses the defaults). */
export interface ReplicationTunables {
  /** How often the worker looks for triggers and runs (ms; default 1 s). */
  pollMs?: number;
  /** How often a run's progress is written (ms; default 1 s). */
  progressMs?: number;
  /** What copies a rule's content (default: the registry's copier over the remote client). */
  copier?: ReplicationCopier;
}

/**
 * Starts replication's worker (ADR 0054): triggers, run claims and their execution by the copier
 * (ADR 0055) over Wharf's registry content and the remote client, which reaches remotes under the
 * webhook sinks' address policy and flags. Stopped on close (runs in progress are given back).
 */
export function startReplication(deps: {
  config: Pick<WharfConfig, "replication">;
  store: Store;
  clock: Clock;
  logger: (line: object) => void;
  registry: Pick<RegistryDeps, "content" | "uploads" | "resolver" | "events">;
  sinks: Delivery["sinks"];
  metrics: ReplicationMetrics;
  /** Opens the rules' sealed remote passwords (the box upstreams use; ADR 0051). */
  secrets: SecretBox;
  /** The upstreams' namespaces, which a PULL never writes into (the cache's); none when omitted. */
  upstreams?: Pick<UpstreamDirectory, "lookup"> | undefined;
  tunables?: ReplicationTunables | undefined;
  onClose: (close: () => Promise<void>) => void;
}): ReplicationWorker {
  const { store, clock, sinks } = deps;
  const policy = sinks.sinkAddresses ?? createSinkAddressPolicy(NO_SINK_EXCEPTIONS);
  const copier =
    deps.tunables?.copier ??
    createReplicationCopier({
      store,
      clock,
      ...deps.registry,
      upstreams: deps.upstreams,
      remoteFor: (rule) =>
        createRemoteRegistry({
          url: rule.remote.url,
          credentials:
            rule.remote.username === "" && rule.remote.password === ""
              ? undefined
              : { username: rule.remote.username, password: rule.remote.password },
          policy,
          allowHttp: sinks.allowHttpSinks ?? false,
          resolve: sinks.resolveSinkHost,
          clock,
        }),
    });
  const worker = startReplicationWorker({
    store,
    secrets: deps.secrets,
    copier,
    clock,
    logger: deps.logger,
    metrics: deps.metrics,
    leaseMs: deps.config.replication.leaseMs,
    pollMs: deps.tunables?.pollMs,
    progressMs: deps.tunables?.progressMs,
  });
  deps.onClose(() => worker.close());
  return worker;
}
