import { recordIssuerUrls } from "./auth/issuer-urls.js";
import { buildApiHandler } from "./composition/api-wing.js";
import { type AuditTunables, buildAudit } from "./composition/audit-wing.js";
import { followChanges } from "./composition/change-followers.js";
import { buildCore } from "./composition/core.js";
import { buildDelivery } from "./composition/delivery-wing.js";
import { scheduleGarbageCollection } from "./composition/garbage-collection.js";
import { createLifecycle } from "./composition/lifecycle.js";
import { buildOperations } from "./composition/operations.js";
import { bindPorts } from "./composition/ports.js";
import { buildPullPolicies } from "./composition/pull-policies.js";
import { buildRegistryDeps } from "./composition/registry-wing.js";
import { type ReplicationTunables, startReplication } from "./composition/replication-wing.js";
import { buildSbomReader } from "./composition/sbom.js";
import { buildSecurityData } from "./composition/security-data-wing.js";
import { type ShutdownPlan, waitOutDelay } from "./composition/shutdown-plan.js";
import { buildSignatureVerifier } from "./composition/signature-verifier.js";
import { buildTls } from "./composition/tls.js";
import { buildTokens } from "./composition/tokens.js";
import { buildTrustedKeyring } from "./composition/trusted-keyring.js";
import { buildUpstreams } from "./composition/upstreams.js";
import type { WharfConfig } from "./config/config.js";
import { servingStoreOptions } from "./config/open-configured-store.js";
import { type Clock, systemClock } from "./core/clock.js";
import type { DispatcherOptions } from "./events/event-dispatcher.js";
import type { PullEventOptions } from "./events/pull-event-buffer.js";
import type { SinkResolver } from "./events/sink-host.js";
import type { FederationOptions } from "./federation/federation.js";
import { createLogSink } from "./observability/log.js";
import { holdTracing } from "./observability/tracing.js";
import { retentionDepsOf } from "./registry/retention/retention-deps.js";
import { startRetentionScheduler } from "./registry/retention/retention-scheduler.js";
import { openBlobDriver } from "./storage/blobs/open-blob-driver.js";
import { openStore } from "./storage/sql/open-store.js";
import type { Store } from "./storage/store.js";
import { trustedProxies } from "./transport/client-address.js";

/** `unsubscribe` as an `onClose` callback. */
function unsubscribeAsync(unsubscribe: () => void): () => Promise<void> {
  return async () => unsubscribe();
}

/** A running Wharf: where it listens, and how to stop it. */
export interface RunningServer {
  apiUrl: string;
  registryUrl: string;
  store: Store;
  /**
   * Stops: `/readyz` turns 503 at once (both ports) and GC stops; with a `plan`, the listeners
   * keep serving through its delay, then stop accepting while in-flight requests finish until its
   * deadline, when the rest are cut (without one: at once, with a 5 s grace). Then everything the
   * server started stops, then the store and blobs. Logs `listeners closed` when they are.
   */
  close(plan?: ShutdownPlan): Promise<void>;
  /**
   * Reads the TLS certificates and keys again and serves them to new connections (open ones keep
   * theirs); logs one line either way, and keeps the current ones when the files are not good.
   * Undefined when neither listener serves TLS. `wharf serve` calls it on SIGHUP.
   */
  reloadTls: (() => boolean) | undefined;
}

/** Options for tests and embedding; the CLI uses the defaults. */
export interface ServerOptions {
  clock?: Clock;
  /**
   * Receives every log line (`level`, `msg`, fields); default: the configuration's log sink
   * (`config.log`: JSON lines on stdout in the schema of ADR 0041, or pretty text).
   */
  logger?: (line: object) => void;
  /** Token federation tunables (upstream issuers' URLs, caches, fetch limits). */
  federation?: FederationOptions;
  /** Event delivery tunables beyond the configuration (back-off, polling, batch sizes). */
  events?: Partial<DispatcherOptions>;
  /** Pull event batching tunables (and how often tags' pull times are written). */
  pullEvents?: Partial<PullEventOptions>;
  /** Retention scheduler tunables: how often it looks for due policies (ms). */
  retention?: { pollMs?: number };
  /** Audit log tunables: the record batch and the retention job's interval (ADR 0048). */
  audit?: AuditTunables;
  /** Replication tunables: polling, progress writes, a copier of the test's (ADR 0054). */
  replication?: ReplicationTunables;
  /**
   * Resolves webhook sink host names, when subscriptions are created and when deliveries connect;
   * default: the system resolver. Tests simulate DNS with it (delivery then runs on the serving
   * thread: a function cannot be handed to another thread).
   */
  resolveSinkHost?: SinkResolver;
  /**
   * The write lock of the SQLite file, shared with other threads of this process that open it
   * (see SqliteWriteLock); default: a new one, shared by the server's own threads. Tests hold it
   * from another thread to make writes wait.
   */
  sqliteWriteLock?: SharedArrayBuffer;
  /** This server is a `wharf serve --workers` cluster worker: `/metrics` asks the primary for the host's. */
  clusterWorker?: boolean;
}

/**
 * The composition root: opens the store (applying migrations) and the blob store, readies them
 * (`buildCore`: refuses a blob store of another database, probes blob writes, seeds built-in roles
 * and the administrator identity), binds both ports (their public URLs may depend on the bound
 * ports), builds the tokens (revocations read before serving) and the wings (delivery, security
 * data, API, registry) from those values, serves both ports, and records the issuer URLs.
 * `close()` stops GC, the listeners, what the wings started (last first), then store and blobs; a
 * failed start-up closes what it bound (at once) and started, and the store and blobs, then throws.
 * With the OpenTelemetry variables set (OTEL_EXPORTER_OTLP_ENDPOINT …), it holds the process's
 * tracing from before the store opens until after everything closed (ADR 0042); without them no
 * tracing code loads.
 */
export async function startServer(config: WharfConfig, options: ServerOptions = {}): Promise<RunningServer> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? (await createLogSink(config.log));
  const storeOptions = servingStoreOptions(config, options.sqliteWriteLock);
  // Before the store and blobs open: their transactions and operations are spans only if it is on.
  const tracing = await holdTracing();
  const changeFeedFailed = (err: unknown) =>
    logger({ level: "error", msg: "change feed failed", event: "change-feed", error: String(err) });
  let store: Store;
  let blobs: Awaited<ReturnType<typeof openBlobDriver>>;
  try {
    store = await openStore({ ...storeOptions.main, onChangeFeedError: changeFeedFailed });
    blobs = await openBlobDriver(config.blobStore, config.dataDir).catch(async (err: unknown) => {
      await store.close();
      throw err;
    });
  } catch (err) {
    await tracing.release();
    throw err;
  }
  const lifecycle = createLifecycle([store, blobs]);
  const { onClose } = lifecycle;
  try {
    const { pageTokens, links, access } = await buildCore({ config, store, blobs, clock });
    const tls = buildTls(config, logger);
    const { api, registry, urls } = await bindPorts(config, logger, tls);
    lifecycle.listening(api, registry);
    const base = { store, blobs, clock, logger, urls };
    const tokens = await buildTokens({ ...base, config, federation: options.federation, onClose });
    const delivery = buildDelivery({
      ...{ ...base, config: config.events, issuer: tokens.issuer, database: storeOptions.worker },
      ...{ tunables: options, onClose },
    });
    const operations = buildOperations({ ...base, clusterWorker: options.clusterWorker });
    const upstreams = buildUpstreams({ store, clock, onClose });
    const audit = buildAudit({ ...base, config: config.audit, tunables: options.audit, onClose });
    const securityData = buildSecurityData({
      ...{ ...base, events: delivery.events, verifier: tokens.verifier, access, links },
      vulnReportMaxBytes: config.vulnReportMaxBytes,
      audit: audit.api,
      trustProxy: trustedProxies(config.trustProxy),
    });
    const securityRoutes = securityData.routes;
    const sboms = buildSbomReader({ config, store, blobs });
    const keyring = buildTrustedKeyring({ store, clock, onClose });
    const signatures = await buildSignatureVerifier({
      ...{ ...base, config, events: delivery.events, keyring, onClose },
    });
    const pullPolicies = buildPullPolicies({
      ...{ store, clock, logger, config, events: delivery.events, keyring, signatures, sboms, onClose },
      vulnerabilities: securityData.imageVulnerabilities,
    });
    // The worker starts once the registry's deps exist; until then a queued run waits for its poll.
    let replication: ReturnType<typeof startReplication> | undefined;
    const replicationQueued = () => replication?.poke();
    api.serve(
      buildApiHandler({
        ...{ ...base, config, pageTokens, links, access, tokens, delivery, operations, securityRoutes },
        signatures,
        audit: audit.api,
        upstreams,
        replicationQueued,
        sboms,
        pullPolicies,
      }),
    );
    const registryDeps = buildRegistryDeps({
      ...{ ...base, config, access, issuer: tokens.issuer, revocations: tokens.revocations },
      ...{ pullTokens: tokens.federation.pullTokens, delivery, operations, securityData, audit },
      upstreams,
      pullPolicies,
    });
    onClose(
      unsubscribeAsync(
        followChanges(store.changes, {
          ...{ access, resolver: registryDeps.resolver, keys: tokens.issuer.keys },
          revocations: tokens.revocations,
          onError: changeFeedFailed,
        }),
      ),
    );
    registry.serve(registryDeps);
    await recordIssuerUrls(store.settings, urls);
    const gc = scheduleGarbageCollection(
      config.gcIntervalMs,
      { store, blobs, clock },
      logger,
      operations.metrics.gc,
    );
    const retention = startRetentionScheduler(
      retentionDepsOf({ store, pageTokens, events: delivery.events }),
      {
        clock,
        logger,
        ...(options.retention?.pollMs === undefined ? {} : { pollMs: options.retention.pollMs }),
      },
    );
    onClose(() => retention.close());
    replication = startReplication({
      ...{ config, store, clock, logger, registry: registryDeps, sinks: delivery.sinks },
      ...{ metrics: operations.metrics.replication, tunables: options.replication, onClose },
      ...{ secrets: upstreams.secrets, upstreams: upstreams.directory },
    });
    return {
      ...urls,
      store,
      reloadTls: tls.api || tls.registry ? () => tls.reload() : undefined,
      async close(plan) {
        const startedAt = performance.now();
        operations.shuttingDown();
        gc.stop();
        const graceMs = plan === undefined ? undefined : await waitOutDelay(plan, startedAt);
        if (graceMs !== undefined)
          logger({ time: new Date().toISOString(), level: "info", msg: "listeners closing", graceMs });
        const listenersClosed = () =>
          logger({ time: new Date().toISOString(), level: "info", msg: "listeners closed" });
        await lifecycle.close([gc.idle()], { graceMs, listenersClosed });
        await tracing.release();
      },
    };
  } catch (err) {
    await lifecycle.abort();
    await tracing.release();
    throw err;
  }
}
