import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createIssuer } from "../../src/auth/issuer.js";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import { type ConfigInput, loadConfig } from "../../src/config/config.js";
import type { Clock } from "../../src/core/clock.js";
import { systemClock } from "../../src/core/clock.js";
import type { FederationOptions } from "../../src/federation/federation.js";
import { type RunningServer, type ServerOptions, startServer } from "../../src/server.js";
import { expectJson } from "./api-assertions.js";

/** How long `api` waits for an answer: far beyond any call's time, short of the test runner's. */
const API_REQUEST_TIMEOUT_MS = 60_000;

/** A Wharf server booted for a test on free loopback ports with its own data folder. */
export interface TestServer extends RunningServer {
  dataDir: string;
  adminToken: string;
  /** Logged request lines, for assertions about logging. */
  logLines: Record<string, unknown>[];
  /** A platform API token for `subject` (as the STS exchange will mint), valid for `ttlSeconds`. */
  tokenFor(subject: string, ttlSeconds?: number): Promise<string>;
  /**
   * POSTs `body` to a Create path (admin token unless `token` is given), asserts HTTP 200 and
   * returns the created resource's uid.
   */
  create(path: string, body: unknown, token?: string): Promise<string>;
  /** A token for `subject` (default: the administrator) issued for the registry audience. */
  registryToken(subject?: string, ttlSeconds?: number): Promise<string>;
  /**
   * fetch against the registry. `token` is sent as Bearer; `body` as is. Redirects are not
   * followed (Location headers are asserted).
   */
  registry(
    path: string,
    init?: {
      method?: string;
      token?: string;
      headers?: Record<string, string>;
      body?: string | Uint8Array | ReadableStream;
    },
  ): Promise<Response>;
  /** fetch against the API with an optional bearer token and JSON body. */
  api(
    path: string,
    init?: { method?: string; token?: string; body?: unknown; rawBody?: string },
  ): Promise<Response>;
}

/**
 * Boots a complete server (SQLite in a temp folder, or PostgreSQL when `databaseUrl` is given).
 * Call `close()` in `after`; it also removes the data folder.
 */
export async function startTestServer(
  opts: {
    databaseUrl?: string;
    clock?: Clock;
    config?: ConfigInput;
    federation?: FederationOptions;
    /** Event delivery and pull batching tunables. */
    events?: ServerOptions["events"];
    pullEvents?: ServerOptions["pullEvents"];
    /** Retention scheduler tunables (how often it polls). */
    retention?: ServerOptions["retention"];
    /** Audit log tunables (record batch, retention interval). */
    audit?: ServerOptions["audit"];
    /** Replication tunables (polling, progress writes, a stand-in copier). */
    replication?: ServerOptions["replication"];
    /** Resolves webhook sink host names (simulated DNS); delivery then runs on the test's thread. */
    resolveSinkHost?: ServerOptions["resolveSinkHost"];
    /** The SQLite file's write lock, for a test thread to hold (see write-lock-holder.ts). */
    sqliteWriteLock?: SharedArrayBuffer;
  } = {},
): Promise<TestServer> {
  const dataDir = await mkdtemp(join(tmpdir(), "wharf-test-"));
  const config = loadConfig(
    {
      dataDir,
      apiAddr: "127.0.0.1:0",
      registryAddr: "127.0.0.1:0",
      databaseUrl: opts.databaseUrl ?? "",
      ...opts.config,
    },
    {},
  );
  const logLines: Record<string, unknown>[] = [];
  const server = await startServer(config, {
    clock: opts.clock ?? systemClock,
    logger: (line) => logLines.push(line as Record<string, unknown>),
    ...(opts.federation ? { federation: opts.federation } : {}),
    ...(opts.events ? { events: opts.events } : {}),
    ...(opts.pullEvents ? { pullEvents: opts.pullEvents } : {}),
    ...(opts.retention ? { retention: opts.retention } : {}),
    ...(opts.audit ? { audit: opts.audit } : {}),
    ...(opts.replication ? { replication: opts.replication } : {}),
    ...(opts.resolveSinkHost ? { resolveSinkHost: opts.resolveSinkHost } : {}),
    ...(opts.sqliteWriteLock ? { sqliteWriteLock: opts.sqliteWriteLock } : {}),
  });
  const issuer = createIssuer({
    store: server.store,
    issuerUrl: server.apiUrl,
    clock: opts.clock ?? systemClock,
  });
  const tokenFor = (subject: string, ttlSeconds = 3600) =>
    issuer.mint({ subject, audience: server.apiUrl, ttlSeconds });
  const adminToken = await tokenFor(ADMIN_IDENTITY_UID);
  const api: TestServer["api"] = (path, init = {}) => {
    const headers: Record<string, string> = {};
    if (init.token) headers.authorization = `Bearer ${init.token}`;
    let body: string | undefined;
    if (init.rawBody !== undefined) body = init.rawBody;
    else if (init.body !== undefined) body = JSON.stringify(init.body);
    if (body !== undefined) headers["content-type"] = "application/json";
    const method = init.method ?? "GET";
    return fetch(`${server.apiUrl}${path}`, {
      method,
      headers,
      body,
      signal: AbortSignal.timeout(API_REQUEST_TIMEOUT_MS),
    }).catch((err: unknown) => {
      // A server that never answers fails the test with the request named, instead of hanging it.
      throw new Error(`${method} ${path}: no answer (${(err as Error).message})`, { cause: err });
    });
  };
  const registry: TestServer["registry"] = (path, init = {}) => {
    const headers: Record<string, string> = { ...init.headers };
    if (init.token) headers.authorization = `Bearer ${init.token}`;
    return fetch(`${server.registryUrl}${path}`, {
      method: init.method ?? "GET",
      headers,
      redirect: "manual",
      ...(init.body === undefined ? {} : { body: init.body, duplex: "half" }),
    } as RequestInit);
  };
  return {
    ...server,
    dataDir,
    registry,
    registryToken: (subject = ADMIN_IDENTITY_UID, ttlSeconds = 3600) =>
      issuer.mint({ subject, audience: server.registryUrl, ttlSeconds }),
    adminToken,
    logLines,
    tokenFor,
    api,
    async create(path, body, token) {
      const res = await api(path, { method: "POST", token: token ?? adminToken, body });
      return (await expectJson<{ uid: string }>(res)).uid;
    },
    async close() {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
