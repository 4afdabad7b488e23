import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { parseDurationSeconds } from "../core/duration.js";
import { isLoopbackHost } from "../core/loopback-host.js";
import {
  parseRateLimit,
  parseRegistryRateLimits,
  type RateLimit,
  RateLimitSpecError,
  type RegistryRateLimits,
} from "../core/rate-limit-spec.js";
import { MAX_GROUP_NAME_LENGTH, pathComponentProblem } from "../core/registry-name.js";
import { formatCidr, parseCidr } from "../events/sink-address-policy.js";
import type { DefaultLoginProvider } from "../login/login-provider.js";
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from "../observability/log-options.js";
import { type MirrorUpstream, MirrorUpstreamSpecError, parseMirrorUpstreams } from "../oci/mirror-names.js";
import { parseBlobDriverUrl, redactBlobDriverUrl } from "../storage/blobs/open-blob-driver.js";
import { trustedProxies } from "../transport/client-address.js";
import { readTlsPair, type TlsFiles } from "./tls-files.js";

/** A host and port to listen on. */
export interface ListenAddress {
  host: string;
  port: number;
}

/** Everything `wharf serve` and the admin commands need; defaults are the embedded setup. */
export interface WharfConfig {
  /** Folder for the SQLite database and blobs. */
  dataDir: string;
  /** Platform API (REST + gRPC + Connect + gRPC-Web) and token issuer. */
  apiAddr: ListenAddress;
  /** OCI registry. */
  registryAddr: ListenAddress;
  /** PostgreSQL URL; empty = SQLite file `<dataDir>/wharf.db`. */
  databaseUrl: string;
  /** Public URL of the API and issuer (`iss` of tokens, audience of API tokens); "" = `http(s)://<api-addr>`. */
  publicUrl: string;
  /** Public URL of the registry (audience of registry tokens); "" = `http(s)://<registry-addr>`. */
  registryUrl: string;
  /** Where blob bytes live: "" = `<dataDir>/blobs`, a path, `file://…`, `s3://bucket/prefix?endpoint=…`, `memory:`. */
  blobStore: string;
  /** The organization whose `latest` and `latest-dev` tags anyone may pull. */
  publicNamespace: string;
  /** Run garbage collection in the server this often (ms); 0 = never (run `wharf gc` instead). */
  gcIntervalMs: number;
  /** Ids of the legal documents TermsService offers; undefined = the built-in default list. */
  termsDocuments?: string[] | undefined;
  /** Webhook delivery settings. */
  events: EventsConfig;
  /** The server's own login provider (`wharf auth login` without an organization provider); undefined = none. */
  defaultLogin?: DefaultLoginProvider | undefined;
  /** Serve `/metrics` without authentication (default: only to the platform administrator). */
  metricsPublic: boolean;
  /** Largest vulnerability report an upload accepts, in bytes (default 256 MiB; ADR 0024). */
  vulnReportMaxBytes: number;
  /** Largest SBOM GetSbom reads, in bytes (default 64 MiB; ADR 0060). */
  sbomMaxBytes: number;
  /** Grace period after an EOL date before ListEolTags calls a tag inactive, in calendar months (default 6). */
  eolGraceMonths: number;
  /**
   * The safety-net lifetime (ms) of what a process caches from the database (grants, repo names,
   * list totals, signing keys; the revocation poll interval), for when a change notification is
   * lost; undefined = each cache's default (1 s, 2 s for signing keys). ADR 0038.
   */
  cacheTtlMs?: number | undefined;
  /** How `wharf serve` stops on SIGTERM/SIGINT (ADR 0035). */
  shutdown: ShutdownConfig;
  /** Processes `wharf serve` runs, sharing both ports (default 1; more only on PostgreSQL; ADR 0036). */
  workers: number;
  /** Token-bucket rate limits, each per process (ADR 0043); unset = off. */
  rateLimits?: RateLimitsConfig | undefined;
  /**
   * The PEM pair each listener serves TLS with (checked when loaded, read again on SIGHUP);
   * a listener without one serves cleartext (ADR 0039).
   */
  tls: { api?: TlsFiles | undefined; registry?: TlsFiles | undefined };
  /** Ranges of the proxies whose `X-Forwarded-*` headers count (normalised CIDRs; default none; ADR 0039). */
  trustProxy: string[];
  /** The server's log lines: the least severe level written, and json or pretty (ADR 0041). */
  log: { level: LogLevel; format: LogFormat };
  /** The audit log (ADR 0048): pulls recorded too (default false), and how long records are kept (ms, default 400 days). */
  audit: { pulls: boolean; retentionMs: number };
  /**
   * The transparent mirror (`--mirror-upstream <registry host>=<org>/<upstream name>`, repeatable;
   * ADR 0053): registry hosts whose repositories are served from an organization's upstream cache.
   */
  mirrorUpstreams: MirrorUpstream[];
  /** Replication (ADR 0054): how long a run's lease lasts; a killed server's run is taken over after it (ms, default 1 min). */
  replication: { leaseMs: number };
  /**
   * A Sigstore trusted-root JSON file (Fulcio CAs, Rekor and CT log keys; ADR 0057), absolute; ""
   * = none: keyless (certificate) signature bundles do not verify.
   */
  sigstoreTrustedRoot: string;
}

/** The rate limits of `--rate-limit-api` and `--rate-limit-registry` (ADR 0043); a limit left out is off. */
export interface RateLimitsConfig {
  /** Every RPC of the API port (REST, gRPC, Connect, gRPC-Web), per caller. */
  api?: RateLimit | undefined;
  /** The registry port's pull and push budgets, per caller. */
  registry?: RegistryRateLimits | undefined;
}

/** How `wharf serve` stops on SIGTERM/SIGINT (ADR 0035). */
export interface ShutdownConfig {
  /** `/readyz` answers 503 this long before the listeners stop accepting (ms; default 5 s). */
  delayMs: number;
  /** Requests still in flight this long after the signal are cut (ms; default 30 s). */
  timeoutMs: number;
}

/** How events are delivered to subscriptions' sinks. */
export interface EventsConfig {
  /** Allow plain-http sinks on non-loopback hosts. */
  allowHttp: boolean;
  /** CIDRs sinks may reach although the sink address policy refuses them (normalised `address/prefix`). */
  sinkAllow: string[];
  /** Allow sinks on loopback addresses. */
  allowLoopback: boolean;
  /** Attempts per delivery before it is given up on (dead letter). */
  maxAttempts: number;
  /** Per-attempt time limit (ms). */
  timeoutMs: number;
  /** How long a worker owns a subscription's lane before another process may take it over (ms). */
  leaseMs: number;
  /** How long events are kept for redelivery and replay once delivered (ms; ADR 0049). */
  retentionMs: number;
}

/** Raw option values from flags or the environment, before defaults and validation. */
export interface ConfigInput {
  dataDir?: string | undefined;
  apiAddr?: string | undefined;
  registryAddr?: string | undefined;
  databaseUrl?: string | undefined;
  publicUrl?: string | undefined;
  registryUrl?: string | undefined;
  blobStore?: string | undefined;
  publicNamespace?: string | undefined;
  gcInterval?: string | undefined;
  termsDocuments?: string | undefined;
  loginIssuer?: string | undefined;
  loginClientId?: string | undefined;
  loginClientSecret?: string | undefined;
  eventsAllowHttp?: string | undefined;
  eventsSinkAllow?: string | undefined;
  eventsAllowLoopback?: string | undefined;
  eventsMaxAttempts?: string | undefined;
  eventsTimeout?: string | undefined;
  eventsLease?: string | undefined;
  eventsRetention?: string | undefined;
  metricsPublic?: string | undefined;
  vulnReportMaxMb?: string | undefined;
  sbomMaxMb?: string | undefined;
  eolGraceMonths?: string | undefined;
  cacheTtl?: string | undefined;
  shutdownDelay?: string | undefined;
  shutdownTimeout?: string | undefined;
  workers?: string | undefined;
  rateLimitApi?: string | undefined;
  rateLimitRegistry?: string | undefined;
  tlsCert?: string | undefined;
  tlsKey?: string | undefined;
  registryTlsCert?: string | undefined;
  registryTlsKey?: string | undefined;
  trustProxy?: string | undefined;
  logLevel?: string | undefined;
  logFormat?: string | undefined;
  auditPulls?: string | undefined;
  auditRetention?: string | undefined;
  /** Comma-separated `<registry host>=<org>/<upstream name>` (the flag is repeatable; its values are joined). */
  mirrorUpstream?: string | undefined;
  replicationLease?: string | undefined;
  sigstoreTrustedRoot?: string | undefined;
}

/** Environment variable of each option. */
export const CONFIG_ENV: Record<keyof ConfigInput, string> = {
  dataDir: "WHARF_DATA_DIR",
  apiAddr: "WHARF_API_ADDR",
  registryAddr: "WHARF_REGISTRY_ADDR",
  databaseUrl: "WHARF_DATABASE_URL",
  publicUrl: "WHARF_PUBLIC_URL",
  registryUrl: "WHARF_REGISTRY_URL",
  blobStore: "WHARF_BLOB_STORE",
  publicNamespace: "WHARF_PUBLIC_NAMESPACE",
  gcInterval: "WHARF_GC_INTERVAL",
  termsDocuments: "WHARF_TERMS_DOCUMENTS",
  loginIssuer: "WHARF_LOGIN_ISSUER",
  loginClientId: "WHARF_LOGIN_CLIENT_ID",
  loginClientSecret: "WHARF_LOGIN_CLIENT_SECRET",
  eventsAllowHttp: "WHARF_EVENTS_ALLOW_HTTP",
  eventsSinkAllow: "WHARF_EVENTS_SINK_ALLOW",
  eventsAllowLoopback: "WHARF_EVENTS_ALLOW_LOOPBACK",
  eventsMaxAttempts: "WHARF_EVENTS_MAX_ATTEMPTS",
  eventsTimeout: "WHARF_EVENTS_TIMEOUT",
  eventsLease: "WHARF_EVENTS_LEASE",
  eventsRetention: "WHARF_EVENTS_RETENTION",
  metricsPublic: "WHARF_METRICS_PUBLIC",
  vulnReportMaxMb: "WHARF_VULN_REPORT_MAX_MB",
  sbomMaxMb: "WHARF_SBOM_MAX_MB",
  eolGraceMonths: "WHARF_EOL_GRACE_MONTHS",
  cacheTtl: "WHARF_CACHE_TTL",
  shutdownDelay: "WHARF_SHUTDOWN_DELAY",
  shutdownTimeout: "WHARF_SHUTDOWN_TIMEOUT",
  workers: "WHARF_WORKERS",
  rateLimitApi: "WHARF_RATE_LIMIT_API",
  rateLimitRegistry: "WHARF_RATE_LIMIT_REGISTRY",
  tlsCert: "WHARF_TLS_CERT",
  tlsKey: "WHARF_TLS_KEY",
  registryTlsCert: "WHARF_REGISTRY_TLS_CERT",
  registryTlsKey: "WHARF_REGISTRY_TLS_KEY",
  trustProxy: "WHARF_TRUST_PROXY",
  logLevel: "WHARF_LOG_LEVEL",
  logFormat: "WHARF_LOG_FORMAT",
  auditPulls: "WHARF_AUDIT_PULLS",
  auditRetention: "WHARF_AUDIT_RETENTION",
  mirrorUpstream: "WHARF_MIRROR_UPSTREAM",
  replicationLease: "WHARF_REPLICATION_LEASE",
  sigstoreTrustedRoot: "WHARF_SIGSTORE_TRUSTED_ROOT",
};

/** An invalid configuration value; the CLI prints the message and exits 2. */
export class ConfigError extends Error {}

/**
 * Builds the configuration: flags win over WHARF_* environment variables, which win over the
 * embedded defaults (127.0.0.1:8080, 127.0.0.1:5000, ./wharf-data, SQLite). Throws ConfigError on a
 * malformed address, URL or port.
 */
export function loadConfig(flags: ConfigInput, env: NodeJS.ProcessEnv = process.env): WharfConfig {
  const pick = (key: keyof ConfigInput): string | undefined => {
    const flag = flags[key];
    if (flag !== undefined && flag !== "") return flag;
    const fromEnv = env[CONFIG_ENV[key]];
    return fromEnv !== undefined && fromEnv !== "" ? fromEnv : undefined;
  };
  const apiAddr = parseAddress(pick("apiAddr") ?? "127.0.0.1:8080", "api-addr");
  const registryAddr = parseAddress(pick("registryAddr") ?? "127.0.0.1:5000", "registry-addr");
  const databaseUrl = pick("databaseUrl") ?? "";
  if (databaseUrl !== "" && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError(`--database-url must be a postgres:// URL (got "${redactUrl(databaseUrl)}")`);
  }
  return {
    dataDir: resolve(pick("dataDir") ?? "wharf-data"),
    apiAddr,
    registryAddr,
    databaseUrl,
    publicUrl: parseUrl(pick("publicUrl"), "public-url"),
    registryUrl: parseUrl(pick("registryUrl"), "registry-url"),
    blobStore: checkBlobStore(pick("blobStore") ?? ""),
    publicNamespace: parseNamespace(pick("publicNamespace") ?? "public"),
    gcIntervalMs: parseInterval(pick("gcInterval")),
    termsDocuments: parseTermsDocuments(pick("termsDocuments")),
    defaultLogin: parseDefaultLogin(pick("loginIssuer"), pick("loginClientId"), pick("loginClientSecret")),
    events: parseEvents(pick),
    metricsPublic: parseFlag(pick("metricsPublic"), "metrics-public"),
    vulnReportMaxBytes: parseMegabytes(pick("vulnReportMaxMb") ?? "256", "vuln-report-max-mb"),
    sbomMaxBytes: parseMegabytes(pick("sbomMaxMb") ?? "64", "sbom-max-mb"),
    eolGraceMonths: parseMonths(pick("eolGraceMonths") ?? "6", "eol-grace-months"),
    cacheTtlMs: optional(pick("cacheTtl"), (v) => parseDurationMs(v, "cache-ttl")),
    shutdown: {
      delayMs: parseWaitMs(pick("shutdownDelay") ?? "5s", "shutdown-delay"),
      timeoutMs: parseWaitMs(pick("shutdownTimeout") ?? "30s", "shutdown-timeout"),
    },
    workers: parseWorkers(pick("workers") ?? "1"),
    rateLimits: parseRateLimits(pick("rateLimitApi"), pick("rateLimitRegistry")),
    tls: parseTls(pick),
    trustProxy: parseTrustProxy(pick("trustProxy")),
    log: {
      level: parseChoice(pick("logLevel") ?? "info", LOG_LEVELS, "log-level"),
      format: parseChoice(pick("logFormat") ?? "json", LOG_FORMATS, "log-format"),
    },
    audit: {
      pulls: parseFlag(pick("auditPulls"), "audit-pulls"),
      retentionMs: parseDurationMs(pick("auditRetention") ?? "400d", "audit-retention"),
    },
    mirrorUpstreams: parseMirrorUpstreamFlag(pick("mirrorUpstream")),
    replication: {
      leaseMs: parseDurationMs(pick("replicationLease") ?? "1m", "replication-lease"),
    },
    sigstoreTrustedRoot: optional(pick("sigstoreTrustedRoot"), (v) => resolve(v)) ?? "",
  };
}

/**
 * The TLS pairs: `--tls-cert`/`--tls-key` for both listeners, `--registry-tls-cert`/`--registry-tls-key`
 * for the registry instead. Each pair is whole or absent, and is read and checked now.
 */
function parseTls(pick: (key: keyof ConfigInput) => string | undefined): WharfConfig["tls"] {
  const pair = (certKey: keyof ConfigInput, keyKey: keyof ConfigInput, prefix: string) => {
    const certFile = pick(certKey);
    const keyFile = pick(keyKey);
    const certFlag = `--${prefix}tls-cert`;
    const keyFlag = `--${prefix}tls-key`;
    if (certFile === undefined && keyFile === undefined) return undefined;
    if (certFile === undefined || keyFile === undefined)
      throw new ConfigError(
        `${certFlag} and ${keyFlag} go together (got only ${certFile ? certFlag : keyFlag})`,
      );
    const files: TlsFiles = { certFile: resolve(certFile), keyFile: resolve(keyFile), certFlag, keyFlag };
    try {
      readTlsPair(files);
    } catch (err) {
      throw new ConfigError((err as Error).message);
    }
    return files;
  };
  const both = pair("tlsCert", "tlsKey", "");
  return { api: both, registry: pair("registryTlsCert", "registryTlsKey", "registry-") ?? both };
}

/** A comma-separated list of CIDRs or addresses, normalised; [] when unset. */
function parseTrustProxy(value: string | undefined): string[] {
  if (value === undefined) return [];
  const entries = value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  try {
    return [...trustedProxies(entries).ranges];
  } catch (err) {
    throw new ConfigError(`--trust-proxy must be a comma-separated list of CIDRs: ${(err as Error).message}`);
  }
}

function parseMirrorUpstreamFlag(value: string | undefined): MirrorUpstream[] {
  try {
    return parseMirrorUpstreams(value === undefined ? [] : [value]);
  } catch (err) {
    if (!(err instanceof MirrorUpstreamSpecError)) throw err;
    throw new ConfigError(`--mirror-upstream takes <registry host>=<org>/<upstream name>: ${err.message}`);
  }
}

/** One of `choices`, case-insensitively. */
function parseChoice<T extends string>(value: string, choices: readonly T[], flag: string): T {
  const choice = choices.find((c) => c === value.trim().toLowerCase());
  if (choice === undefined)
    throw new ConfigError(`--${flag} must be one of ${choices.join(", ")} (got "${value}")`);
  return choice;
}

/** `parse(value)`, or undefined when unset. */
function optional<T>(value: string | undefined, parse: (value: string) => T): T | undefined {
  return value === undefined ? undefined : parse(value);
}

/** A non-negative duration (`0`, `500ms`, `5s`, `2m`) in ms. */
function parseWaitMs(value: string, flag: string): number {
  const ms = /^(\d{1,7})ms$/.exec(value.trim());
  if (ms) return Number(ms[1]);
  if (/^0+[smhd]?$/.test(value.trim())) return 0;
  const seconds = parseDurationSeconds(value);
  if (seconds === undefined || seconds > 86_400)
    throw new ConfigError(`--${flag} must be a duration like 5s, 500ms or 0 (got "${value}")`);
  return seconds * 1000;
}

/** `auto` (the host's available parallelism) or a whole number from 1 to 256. */
function parseWorkers(value: string): number {
  const workers = value === "auto" ? availableParallelism() : /^\d{1,3}$/.test(value) ? Number(value) : 0;
  if (!(workers >= 1 && workers <= 256))
    throw new ConfigError(`--workers must be auto or a whole number from 1 to 256 (got "${value}")`);
  return workers;
}

/** A whole number of months from 0 to 120. */
function parseMonths(value: string, flag: string): number {
  const months = /^\d{1,3}$/.test(value) ? Number(value) : Number.NaN;
  if (!(months >= 0 && months <= 120))
    throw new ConfigError(`--${flag} must be a whole number of months from 0 to 120 (got "${value}")`);
  return months;
}

/** A whole number of MiB from 1 to 4096, as bytes. */
function parseMegabytes(value: string, flag: string): number {
  const mb = /^\d{1,4}$/.test(value) ? Number(value) : Number.NaN;
  if (!(mb >= 1 && mb <= 4096))
    throw new ConfigError(`--${flag} must be a whole number of MiB from 1 to 4096 (got "${value}")`);
  return mb * 1024 * 1024;
}

function parseEvents(pick: (key: keyof ConfigInput) => string | undefined): EventsConfig {
  const events: EventsConfig = {
    allowHttp: parseFlag(pick("eventsAllowHttp"), "events-allow-http"),
    sinkAllow: parseSinkAllow(pick("eventsSinkAllow")),
    allowLoopback: parseFlag(pick("eventsAllowLoopback"), "events-allow-loopback"),
    maxAttempts: parseCount(pick("eventsMaxAttempts") ?? "20", "events-max-attempts"),
    timeoutMs: parseDurationMs(pick("eventsTimeout") ?? "10s", "events-timeout"),
    leaseMs: parseDurationMs(pick("eventsLease") ?? "60s", "events-lease"),
    retentionMs: parseDurationMs(pick("eventsRetention") ?? "30d", "events-retention"),
  };
  // A lane must outlive at least one attempt, or a worker could never send within its lease.
  if (events.leaseMs < 2 * events.timeoutMs) {
    throw new ConfigError(
      `--events-lease must be at least twice --events-timeout (got ${events.leaseMs / 1000}s and ${events.timeoutMs / 1000}s)`,
    );
  }
  return events;
}

function parseFlag(value: string | undefined, name: string): boolean {
  if (value === undefined || value === "false" || value === "0") return false;
  if (value === "true" || value === "1") return true;
  throw new ConfigError(`--${name} must be true or false (got "${value}")`);
}

/** A comma-separated list of CIDRs (a bare address is a /32 or /128); [] when unset. */
function parseSinkAllow(value: string | undefined): string[] {
  if (value === undefined) return [];
  const entries = value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  return entries.map((entry) => {
    const cidr = parseCidr(entry);
    if (!cidr) {
      throw new ConfigError(
        `--events-sink-allow must be a comma-separated list of CIDRs like 10.0.0.0/8 or fd00::/8 ("${entry}" is not one)`,
      );
    }
    return formatCidr(cidr);
  });
}

function parseCount(value: string, name: string): number {
  const n = Number(value);
  if (!/^\d{1,6}$/.test(value) || n < 1)
    throw new ConfigError(`--${name} must be a positive integer (got "${value}")`);
  return n;
}

function parseDurationMs(value: string, name: string): number {
  const seconds = parseDurationSeconds(value);
  if (seconds === undefined || seconds <= 0) {
    throw new ConfigError(`--${name} must be a duration like 10s or 2m (got "${value}")`);
  }
  return seconds * 1000;
}

function parseDefaultLogin(
  issuer: string | undefined,
  clientId: string | undefined,
  clientSecret: string | undefined,
): DefaultLoginProvider | undefined {
  if (issuer === undefined && clientId === undefined) {
    if (clientSecret !== undefined)
      throw new ConfigError("--login-client-secret needs --login-issuer and --login-client-id");
    return undefined;
  }
  if (issuer === undefined || clientId === undefined) {
    throw new ConfigError("--login-issuer and --login-client-id go together");
  }
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new ConfigError(`--login-issuer must be an https URL (got "${issuer}")`);
  }
  const loopback = isLoopbackHost(url.hostname);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) {
    throw new ConfigError(`--login-issuer must be an https URL (http only on loopback; got "${issuer}")`);
  }
  return {
    issuer: issuer.replace(/\/+$/, ""),
    clientId,
    clientSecret: clientSecret ?? "",
    additionalScopes: [],
  };
}

/** Parses `host:port` (IPv6 hosts in brackets); port 0 asks for any free port. */
export function parseAddress(value: string, name: string): ListenAddress {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value);
  const port = Number(match?.[3]);
  if (!match || port > 65535) throw new ConfigError(`--${name} must be host:port (got "${value}")`);
  return { host: match[1] ?? match[2] ?? "", port };
}

/** `host:port`, bracketing IPv6 hosts. */
export function formatAddress(addr: ListenAddress): string {
  return addr.host.includes(":") ? `[${addr.host}]:${addr.port}` : `${addr.host}:${addr.port}`;
}

/**
 * The public URL of a service: the configured one, else `http://` (`https://` when it serves TLS)
 * + the address it listens on.
 */
export function publicUrlOf(configured: string, bound: ListenAddress, tls = false): string {
  return configured !== "" ? configured : `${tls ? "https" : "http"}://${formatAddress(bound)}`;
}

function checkBlobStore(value: string): string {
  try {
    parseBlobDriverUrl(value, ".");
  } catch (err) {
    throw new ConfigError(`--blob-store: ${redactBlobDriverUrl((err as Error).message)}`);
  }
  return value;
}

function parseInterval(value: string | undefined): number {
  if (value === undefined || value === "0") return 0;
  const seconds = parseDurationSeconds(value);
  if (seconds === undefined)
    throw new ConfigError(`--gc-interval must be a duration like 24h, or 0 (got "${value}")`);
  return seconds * 1000;
}

/** A comma-separated list of document ids (`sfdpa.v1,guardener-tos.v1`); undefined when unset. */
function parseTermsDocuments(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const ids = [...new Set(value.split(",").map((s) => s.trim()))].filter((s) => s !== "");
  const bad = ids.find((id) => !/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(id));
  if (bad !== undefined || ids.length === 0) {
    throw new ConfigError(
      `--terms-documents must be a comma-separated list of document ids (got "${value}")`,
    );
  }
  return ids;
}

function parseNamespace(value: string): string {
  const problem = pathComponentProblem(value, MAX_GROUP_NAME_LENGTH);
  if (problem) {
    throw new ConfigError(`--public-namespace is an organization name: it ${problem} (got "${value}")`);
  }
  return value;
}

function parseUrl(value: string | undefined, name: string): string {
  if (value === undefined) return "";
  try {
    const url = new URL(value);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error();
    return url.origin;
  } catch {
    throw new ConfigError(`--${name} must be an http(s) URL (got "${value}")`);
  }
}

/** A database URL with its password replaced, safe to print. */
export function redactUrl(value: string): string {
  return value.replace(/\/\/([^:/@]+):[^@]*@/, "//$1:***@");
}

/** `--rate-limit-api` and `--rate-limit-registry`; undefined when neither is set (limits off). */
function parseRateLimits(
  api: string | undefined,
  registry: string | undefined,
): RateLimitsConfig | undefined {
  if (api === undefined && registry === undefined) return undefined;
  return {
    api: optional(api, (v) => rateLimitOption(v, "rate-limit-api", parseRateLimit)),
    registry: optional(registry, (v) => rateLimitOption(v, "rate-limit-registry", parseRegistryRateLimits)),
  };
}

/** `parse(value)`, its RateLimitSpecError a ConfigError naming `--flag`. */
function rateLimitOption<T>(value: string, flag: string, parse: (value: string) => T): T {
  try {
    return parse(value);
  } catch (err) {
    if (err instanceof RateLimitSpecError) throw new ConfigError(`--${flag}: ${err.message}`);
    throw err;
  }
}
