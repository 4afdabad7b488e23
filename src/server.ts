import { randomBytes } from "node:crypto";
import type { Issuer } from "./auth/issuer.js";
import { createIssuer } from "./auth/issuer.js";
import { recordIssuerUrls } from "./auth/issuer-urls.js";
import { type RevocationChecker, watchTokenRevocations } from "./auth/token-revocations.js";
import { createTokenVerifier } from "./auth/token-verifier.js";
import { createWellKnownRoutes } from "./auth/well-known.js";
import type { AccessResolver } from "./authz/access.js";
import { createAccessResolver } from "./authz/access.js";
import { ensureAdminIdentity } from "./authz/admin-identity.js";
import { seedBuiltInRoles } from "./authz/built-in-roles.js";
import { publicUrlOf, type WharfConfig } from "./config/config.js";
import { servingStoreOptions } from "./config/open-configured-store.js";
import { storageLocationsOf } from "./config/storage-locations.js";
import { type Clock, systemClock } from "./core/clock.js";
import { PageTokenCodec } from "./core/list.js";
import { startDispatcherThread } from "./events/dispatcher-thread.js";
import type { DispatcherOptions } from "./events/event-dispatcher.js";
import { createEventRecorder, type EventRecorder } from "./events/event-recorder.js";
import {
  type PullEventBuffer,
  type PullEventOptions,
  startPullEventBuffer,
} from "./events/pull-event-buffer.js";
import { createSinkAddressPolicy, type SinkAddressOptions } from "./events/sink-address-policy.js";
import type { SinkResolver } from "./events/sink-host.js";
import { startWebhookDelivery } from "./events/webhook-delivery.js";
import { createFederation, type FederationOptions } from "./federation/federation.js";
import type { PullTokenAuthenticator } from "./federation/pull-token-auth.js";
import { issueRefreshToken } from "./federation/refresh-tokens.js";
import { createLoginFlow } from "./login/login-flow.js";
import { resolveSessionGrants, sessionGrantUids } from "./login/session-grants.js";
import type { GcMetrics } from "./observability/gc-metrics.js";
import { createReadinessCheck, writeBlobProbe } from "./observability/readiness.js";
import { createServerMetrics } from "./observability/server-metrics.js";
import { ANONYMOUS_SUBJECT, createRegistryAuthenticator } from "./oci/registry-auth.js";
import { createRegistryGate } from "./oci/registry-gate.js";
import type { RegistryDeps } from "./oci/registry-request.js";
import { bindRegistryServer } from "./oci/registry-server.js";
import { createUpstreamOidc } from "./oidc/upstream-oidc-client.js";
import { createFederationRoutes } from "./plain-routes/federation-routes.js";
import { createLoginRoutes } from "./plain-routes/login-routes.js";
import { createVulnReportRoutes } from "./plain-routes/vuln-report-routes.js";
import { createBlobUploads } from "./registry/data-plane/blob-uploads.js";
import { collectGarbage } from "./registry/data-plane/garbage-collector.js";
import { createPublicContent } from "./registry/data-plane/public-content.js";
import { createRegistryContent } from "./registry/data-plane/registry-content.js";
import { createRepoResolver } from "./registry/data-plane/repo-resolver.js";
import { createServiceBindings } from "./service-bindings.js";
import { bindBlobStore } from "./storage/blob-store-identity.js";
import type { BlobDriver } from "./storage/blobs/blob-driver.js";
import { openBlobDriver } from "./storage/blobs/open-blob-driver.js";
import { openStore } from "./storage/sql/open-store.js";
import type { Store } from "./storage/store.js";
import { createApiReferenceRoutes } from "./transport/api-reference-routes.js";
import { createConsoleRoutes } from "./transport/console-routes.js";
import { bindApiServer, createApiHandler } from "./transport/create-api-handler.js";
import { createOperationsRoutes } from "./transport/operations-routes.js";
import { createVulnReferrerIngest } from "./vulnreports/referrer-ingest.js";

/** A running Wharf: where it listens, and how to stop it. */
export interface RunningServer {
  apiUrl: string;
  registryUrl: string;
  store: Store;
  close(): Promise<void>;
}

/** Options for tests and embedding; the CLI uses the defaults. */
export interface ServerOptions {
  clock?: Clock;
  /** Receives one structured line per request; default: JSON on stdout. */
  logger?: (line: object) => void;
  /** Token federation tunables (upstream issuers' URLs, caches, fetch limits). */
  federation?: FederationOptions;
  /** Event delivery tunables beyond the configuration (back-off, polling, batch sizes). */
  events?: Partial<DispatcherOptions>;
  /** Pull event batching tunables. */
  pullEvents?: Partial<PullEventOptions>;
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
}

const PAGE_TOKEN_SECRET_KEY = "page_token_secret";

/**
 * The composition root: opens the store (applying migrations) and the blob store, refuses a blob
 * store of another database (`BlobStoreMismatchError`, see `bindBlobStore`), seeds built-in roles
 * and the administrator identity, builds issuer, verifier, authorization and services, and starts
 * the API listener and the registry listener. `close()` stops both and closes the store.
 */
export async function startServer(config: WharfConfig, options: ServerOptions = {}): Promise<RunningServer> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? ((line: object) => process.stdout.write(`${JSON.stringify(line)}\n`));
  const storeOptions = servingStoreOptions(config, options.sqliteWriteLock);
  const store = await openStore(storeOptions.main);
  const blobs = openBlobDriver(config.blobStore, config.dataDir);
  // Stopped first on close (before the listeners and the store), in reverse order of start.
  const closers: (() => Promise<void>)[] = [];
  const runClosers = () => Promise.allSettled(closers.reverse().map((close) => close()));
  // Listeners already bound when start-up fails (a busy registry port): closed, so the process can exit.
  const listening: { close(options?: { graceMs?: number }): Promise<void> }[] = [];
  try {
    // Before anything touches blobs: refuse a blob store that belongs to another database.
    await bindBlobStore(store, blobs, storageLocationsOf(config));
    // Proves blob storage takes writes before serving, and leaves the object readiness looks for.
    await writeBlobProbe(blobs);
    const now = clock.now();
    await seedBuiltInRoles(store, now);
    await ensureAdminIdentity(store, now);
    const secret = await store.settings.putIfAbsent(
      PAGE_TOKEN_SECRET_KEY,
      randomBytes(32).toString("base64url"),
    );
    const pageTokens = new PageTokenCodec(Buffer.from(secret, "base64url"), clock);
    const access = createAccessResolver({
      store,
      clock,
      session: {
        key: (claims) => sessionGrantUids(claims).join(" "),
        grants: (key) => resolveSessionGrants(store, key.split(" ")),
      },
    });

    // Both public URLs may only be known once the ports are bound (port 0): bind first, serve
    // once everything is built (503 until then).
    const api = await bindApiServer(config.apiAddr);
    listening.push(api);
    const registryServer = await bindRegistryServer(config.registryAddr, logger);
    listening.push(registryServer);
    const apiUrl = publicUrlOf(config.publicUrl, api.address);
    const registryUrl = publicUrlOf(config.registryUrl, registryServer.address);
    const issuer = createIssuer({ store, issuerUrl: apiUrl, clock });
    // Withdrawn tokens, shared by every verifier of this process; polled so revocations made
    // anywhere (`wharf admin tokens revoke`) apply here within seconds (ADR 0018).
    const revocations = watchTokenRevocations({
      revocations: store.tokenRevocations,
      clock,
      onError: (err) => logger({ level: "error", event: "token-revocations", error: String(err) }),
    });
    closers.push(async () => revocations.close());
    await revocations.refresh();
    const federation = createFederation({
      store,
      issuer,
      clock,
      apiUrl,
      registryUrl,
      revocations,
      options: options.federation,
      defaultLogin: config.defaultLogin,
    });
    const verifier = createTokenVerifier({ issuer, audience: apiUrl, clock, revocations });
    const deliveryOptions: Partial<DispatcherOptions> = {
      maxAttempts: config.events.maxAttempts,
      timeoutMs: config.events.timeoutMs,
      leaseMs: config.events.leaseMs,
      ...options.events,
    };
    const sinkAddresses: SinkAddressOptions = {
      allow: config.events.sinkAllow,
      allowLoopback: config.events.allowLoopback,
    };
    // Delivery runs on its own thread, except with a test's clock or resolver, which a thread cannot share.
    const dispatcher =
      clock === systemClock && !options.resolveSinkHost
        ? startDispatcherThread(
            { database: storeOptions.worker, issuerUrl: apiUrl, options: deliveryOptions, sinkAddresses },
            logger,
          )
        : startWebhookDelivery({
            ...{ events: store.events, issuer, clock, logger, options: deliveryOptions, sinkAddresses },
            resolveSinkHost: options.resolveSinkHost,
          });
    closers.push(() => dispatcher.close());
    const events: EventRecorder = createEventRecorder({
      apiUrl,
      registryUrl,
      appended: () => dispatcher.poke(),
    });
    const pullEvents = startPullEventBuffer({
      store,
      recorder: events,
      clock,
      logger,
      options: options.pullEvents,
    });
    closers.push(() => pullEvents.close());
    const bindings = createServiceBindings({
      store,
      blobs,
      vulnReportMaxBytes: config.vulnReportMaxBytes,
      eolGraceMonths: config.eolGraceMonths,
      pageTokens,
      events,
      bindingsChanged: (identityUid?: string) => access.invalidate(identityUid),
      allowHttpSinks: config.events.allowHttp,
      sinkAddresses: createSinkAddressPolicy(sinkAddresses),
      resolveSinkHost: options.resolveSinkHost,
      termsDocuments: config.termsDocuments,
      publicNamespace: config.publicNamespace,
    });
    const metrics = createServerMetrics({
      events: { backlog: (limit) => store.subscriptions.backlog(limit), now: () => clock.now() },
    });
    const readiness = createReadinessCheck({
      database: () => store.settings.get(PAGE_TOKEN_SECRET_KEY),
      blobs,
      logger,
    });
    const webConsole = createConsoleRoutes({
      connectOrigins: [new URL(registryUrl).origin],
    });
    const handler = createApiHandler({
      bindings,
      authenticator: verifier,
      accessFor: (principal) => access.accessFor(principal),
      clock,
      logger,
      metrics: metrics.api,
      extraRoutes: [
        ...createOperationsRoutes({
          readiness,
          metrics: { ...metrics, public: config.metricsPublic },
          authenticator: verifier,
          accessFor: (principal) => access.accessFor(principal),
        }),
        ...createWellKnownRoutes(issuer),
        ...createVulnReportRoutes({
          store,
          blobs,
          events,
          vulnReportMaxBytes: config.vulnReportMaxBytes,
          verifier,
          clock,
          accessFor: (principal) => access.accessFor(principal),
        }),
        ...createApiReferenceRoutes(),
        ...webConsole.routes,
        ...createFederationRoutes({
          sts: federation.sts,
          issuerUrl: issuer.issuerUrl,
          apiUrl,
          registryUrl: federation.registryUrl,
        }),
        ...createLoginRoutes(
          createLoginFlow({
            store,
            issuer,
            upstream: createUpstreamOidc(federation.externalTokens),
            clock,
            apiUrl,
            audiences: [apiUrl, registryUrl],
            defaultProvider: config.defaultLogin,
            issueRefreshToken: async ({ identityUid, audience, act }) =>
              (
                await issueRefreshToken(
                  store,
                  { identityUid, audience: [audience], act },
                  { now: clock.now() },
                )
              ).token,
          }),
        ),
      ],
      fallbackRoute: webConsole.fallback,
    });
    api.serve(handler);
    registryServer.serve(
      registryDeps(config, {
        ...{ store, issuer, access, apiUrl, registryUrl, clock, logger, blobs, events, pullEvents },
        pullTokens: federation.pullTokens,
        revocations,
        readiness,
        metrics: metrics.registry,
      }),
    );
    await recordIssuerUrls(store.settings, { apiUrl, registryUrl });
    const gc = scheduleGarbageCollection(config.gcIntervalMs, { store, blobs, clock }, logger, metrics.gc);
    return {
      apiUrl,
      registryUrl,
      store,
      async close() {
        gc.stop();
        await Promise.allSettled([api.close(), registryServer.close(), gc.idle()]);
        await runClosers();
        await Promise.allSettled([store.close(), blobs.close()]);
      },
    };
  } catch (err) {
    await Promise.allSettled(listening.map((listener) => listener.close({ graceMs: 0 })));
    await runClosers();
    await Promise.allSettled([store.close(), blobs.close()]);
    throw err;
  }
}

/** Builds the registry's dependencies; `registryUrl` is its public URL (the audience of its tokens). */
function registryDeps(
  config: WharfConfig,
  parts: {
    store: Store;
    blobs: BlobDriver;
    issuer: Issuer;
    access: AccessResolver;
    apiUrl: string;
    registryUrl: string;
    clock: Clock;
    logger: (line: object) => void;
    pullTokens: PullTokenAuthenticator;
    revocations: RevocationChecker;
    events: EventRecorder;
    pullEvents: PullEventBuffer;
    readiness: RegistryDeps["readiness"];
    metrics: RegistryDeps["metrics"];
  },
): RegistryDeps {
  const { store, blobs, issuer, access, apiUrl, clock, events, pullEvents } = parts;
  const url = parts.registryUrl;
  const verifierOptions = {
    ...{ issuer, audience: [url, apiUrl], clock, anonymousSubject: ANONYMOUS_SUBJECT },
    revocations: parts.revocations,
  };
  const auth = createRegistryAuthenticator({
    registryUrl: url,
    verifier: createTokenVerifier(verifierOptions),
    // Upload sessions outlive registry tokens; they were authorized when they started.
    expiredVerifier: createTokenVerifier({
      ...verifierOptions,
      clockToleranceSeconds: UPLOAD_SESSION_SECONDS,
    }),
    accessResolver: access,
    pullTokens: parts.pullTokens,
  });
  return {
    content: createRegistryContent({ store, blobs, clock, events }),
    uploads: createBlobUploads({ store, blobs, clock }),
    resolver: createRepoResolver({ store, clock, events }),
    auth,
    gate: createRegistryGate({ auth, publicNamespace: config.publicNamespace }),
    publicContent: createPublicContent(store),
    issuer,
    events,
    pullEvents,
    clock,
    registryUrl: url,
    consoleOrigin: new URL(apiUrl).origin,
    readiness: parts.readiness,
    metrics: parts.metrics,
    vulnReferrers: createVulnReferrerIngest({
      store,
      blobs,
      vulnReportMaxBytes: config.vulnReportMaxBytes,
      events,
      clock,
      log: (outcome) =>
        parts.logger({
          ...(outcome.stored ? {} : { level: "warn" }),
          event: "vuln-report-referrer",
          ...outcome,
        }),
    }),
  };
}

/**
 * Runs `collectGarbage` every `intervalMs` (never when 0), one run at a time, logging each report
 * and counting it in `metrics`. Several servers may run it: deletions take the exclusive registry
 * lock and re-check their rules.
 */
function scheduleGarbageCollection(
  intervalMs: number,
  deps: { store: Store; blobs: BlobDriver; clock: Clock },
  logger: (line: object) => void,
  metrics: GcMetrics,
): { stop(): void; idle(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const timer =
    intervalMs > 0
      ? setInterval(() => {
          running = running.then(async () => {
            const started = performance.now();
            const seconds = () => (performance.now() - started) / 1000;
            try {
              const report = await collectGarbage(deps);
              metrics.run("success", seconds(), report);
              logger({ event: "gc", ...report });
            } catch (err) {
              metrics.run("error", seconds());
              logger({ level: "error", event: "gc", error: String(err) });
            }
          });
        }, intervalMs)
      : undefined;
  timer?.unref();
  return { stop: () => clearInterval(timer), idle: () => running };
}

/** How long an upload session may be continued with the token that started it. */
const UPLOAD_SESSION_SECONDS = 24 * 60 * 60;
