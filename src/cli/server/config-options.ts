// The server's configuration flags (`serve`, `gc`, `admin …` and the local importers take them or a
// part of them). Each is also an environment variable, which loadConfig reads when the flag is
// absent: the flags are declared here without defaults so that the variables keep working.
import { type Command, Option } from "commander";
import type { ConfigInput } from "../../config/config.js";

/** One configuration flag: its commander flags, the ConfigInput field and its help. */
interface ConfigFlag {
  flags: string;
  field: keyof ConfigInput;
  help: string;
  /** May be given several times; the values are joined with commas (as the variable holds them). */
  repeatable?: boolean;
}

/**
 * The environment variable of a ConfigInput field, `WHARF_` and the field in upper snake case
 * (CONFIG_ENV of config.ts, which help does not load: a test holds them equal).
 */
export function envOf(field: keyof ConfigInput): string {
  return `WHARF_${field.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}

/** Every configuration flag, in the order help lists them. */
export const CONFIG_FLAGS: readonly ConfigFlag[] = [
  { flags: "--data-dir <dir>", field: "dataDir", help: "data folder (default ./wharf-data)" },
  {
    flags: "--api-addr <host:port>",
    field: "apiAddr",
    help: "platform API listener (default 127.0.0.1:8080)",
  },
  {
    flags: "--registry-addr <host:port>",
    field: "registryAddr",
    help: "registry listener (default 127.0.0.1:5000)",
  },
  {
    flags: "--database-url <url>",
    field: "databaseUrl",
    help: "postgres://… (default: SQLite in the data dir)",
  },
  {
    flags: "--public-url <url>",
    field: "publicUrl",
    help: "public URL of the API and issuer (default http://<api-addr>)",
  },
  {
    flags: "--registry-url <url>",
    field: "registryUrl",
    help: "public URL of the registry (default http://<registry-addr>)",
  },
  {
    flags: "--blob-store <url>",
    field: "blobStore",
    help: "blob storage: a folder (default <data-dir>/blobs) or s3://bucket/prefix?endpoint=…&region=…",
  },
  {
    flags: "--public-namespace <org>",
    field: "publicNamespace",
    help: "organization whose latest tags anyone may pull (default public)",
  },
  {
    flags: "--gc-interval <duration>",
    field: "gcInterval",
    help: "run garbage collection in the server this often (default 0: never)",
  },
  {
    flags: "--terms-documents <ids>",
    field: "termsDocuments",
    help: "legal documents groups may accept, comma-separated (default sfdpa.v1,guardener-tos.v1,skills-tos.v1)",
  },
  {
    flags: "--login-issuer <url>",
    field: "loginIssuer",
    help: "OpenID Connect issuer people log in through when they name no organization identity provider (default: none)",
  },
  { flags: "--login-client-id <id>", field: "loginClientId", help: "Wharf's client id at that issuer" },
  {
    flags: "--login-client-secret <secret>",
    field: "loginClientSecret",
    help: "its client secret (prefer the variable; omit for PKCE-only clients)",
  },
  {
    flags: "--events-allow-http <bool>",
    field: "eventsAllowHttp",
    help: "allow plain-http webhook sinks beyond loopback (default false)",
  },
  {
    flags: "--events-sink-allow <cidrs>",
    field: "eventsSinkAllow",
    help: "comma-separated ranges webhook sinks may reach although refused (link-local, metadata, multicast…; default none)",
  },
  {
    flags: "--events-allow-loopback <bool>",
    field: "eventsAllowLoopback",
    help: "allow webhook sinks on loopback addresses (default false)",
  },
  {
    flags: "--events-max-attempts <n>",
    field: "eventsMaxAttempts",
    help: "attempts before a delivery is given up on (default 20)",
  },
  {
    flags: "--events-timeout <duration>",
    field: "eventsTimeout",
    help: "time limit of one delivery attempt (default 10s)",
  },
  {
    flags: "--events-lease <duration>",
    field: "eventsLease",
    help: "longest a delivery lane stays with one process per round; a dead process's lanes move within seconds (default 60s)",
  },
  {
    flags: "--events-retention <duration>",
    field: "eventsRetention",
    help: "how long delivered events are kept for redelivery and replay (default 30d; e.g. 1h keeps them an hour)",
  },
  {
    flags: "--metrics-public <bool>",
    field: "metricsPublic",
    help: "serve /metrics without a token (default false: administrator only)",
  },
  {
    flags: "--vuln-report-max-mb <n>",
    field: "vulnReportMaxMb",
    help: "largest vulnerability report an upload takes (default 256)",
  },
  {
    flags: "--sbom-max-mb <n>",
    field: "sbomMaxMb",
    help: "largest SBOM an image's SBOM is read from, in MiB (default 64)",
  },
  {
    flags: "--eol-grace-months <n>",
    field: "eolGraceMonths",
    help: "months a tag stays in grace after its EOL date (default 6)",
  },
  {
    flags: "--cache-ttl <duration>",
    field: "cacheTtl",
    help: "safety-net lifetime of cached grants, repo names, list totals and keys (default 1s; keys 2s)",
  },
  {
    flags: "--shutdown-delay <duration>",
    field: "shutdownDelay",
    help: "on SIGTERM, /readyz answers 503 this long before the listeners stop accepting; a second signal skips it (default 5s)",
  },
  {
    flags: "--shutdown-timeout <duration>",
    field: "shutdownTimeout",
    help: "on SIGTERM, requests still running this long after it are cut (default 30s)",
  },
  {
    flags: "--workers <n|auto>",
    field: "workers",
    help: "processes sharing both ports; auto = one per core; more than 1 needs PostgreSQL (default 1)",
  },
  {
    flags: "--rate-limit-api <limit>",
    field: "rateLimitApi",
    help: "per-caller token bucket for API calls, per process, e.g. 50/s,burst=100 (default: off)",
  },
  {
    flags: "--rate-limit-registry <limits>",
    field: "rateLimitRegistry",
    help: "per-caller registry budgets, per process, e.g. pull=50/s,burst=100;push=10/s,burst=20 (default: off)",
  },
  {
    flags: "--tls-cert <file>",
    field: "tlsCert",
    help: "PEM certificate (chain) both listeners serve HTTPS with, h2 and HTTP/1.1; SIGHUP reloads it (default: no TLS)",
  },
  { flags: "--tls-key <file>", field: "tlsKey", help: "PEM private key of --tls-cert" },
  {
    flags: "--registry-tls-cert <file>",
    field: "registryTlsCert",
    help: "PEM certificate the registry serves instead of --tls-cert",
  },
  {
    flags: "--registry-tls-key <file>",
    field: "registryTlsKey",
    help: "PEM private key of --registry-tls-cert",
  },
  {
    flags: "--trust-proxy <cidrs>",
    field: "trustProxy",
    help: "comma-separated ranges of proxies whose X-Forwarded-For/-Proto/-Host count (default none)",
  },
  {
    flags: "--audit-pulls <bool>",
    field: "auditPulls",
    help: "record every manifest pull in the audit log too (default false)",
  },
  {
    flags: "--audit-retention <duration>",
    field: "auditRetention",
    help: "prune audit records older than this (default 400d)",
  },
  {
    flags: "--mirror-upstream <mapping>",
    field: "mirrorUpstream",
    help: "host=org/upstream: serve a registry host's repositories from that upstream cache, e.g. docker.io=acme/hub (repeatable)",
    repeatable: true,
  },
  {
    flags: "--replication-lease <duration>",
    field: "replicationLease",
    help: "how long a replication run is held by its server; a killed server's run restarts elsewhere after it (default 1m)",
  },
  {
    flags: "--sigstore-trusted-root <file>",
    field: "sigstoreTrustedRoot",
    help: "Sigstore trusted_root.json (Fulcio CAs, Rekor and CT log keys) that keyless signature bundles are verified against (default: none, keyless bundles do not verify)",
  },
  {
    flags: "--log-level <level>",
    field: "logLevel",
    help: "least severe log line written: trace, debug, info, warn, error, fatal or silent (default info)",
  },
  {
    flags: "--log-format <format>",
    field: "logFormat",
    help: "log lines as json (one object per line on stdout) or pretty (text for people) (default json)",
  },
];

/** The flags only `wharf serve` takes (the other commands do not serve). */
export const SERVE_ONLY_FIELDS: readonly (keyof ConfigInput)[] = [
  "shutdownDelay",
  "shutdownTimeout",
  "workers",
  "rateLimitApi",
  "rateLimitRegistry",
  "tlsCert",
  "tlsKey",
  "registryTlsCert",
  "registryTlsKey",
  "trustProxy",
  "auditPulls",
  "auditRetention",
  "mirrorUpstream",
  "replicationLease",
  "sigstoreTrustedRoot",
  "logLevel",
  "logFormat",
];

/** Every field: what `wharf serve` takes. */
export const SERVE_FIELDS: readonly (keyof ConfigInput)[] = CONFIG_FLAGS.map((flag) => flag.field);

/** The flags of the commands that only open the store (gc, admin, local imports). */
export const STORE_FIELDS: readonly (keyof ConfigInput)[] = ["dataDir", "databaseUrl"];

/**
 * Declares the configuration flags on `command` (those of `fields`; by default all but
 * {@link SERVE_ONLY_FIELDS}), each described with its environment variable. Read them back with
 * {@link configInputOf}.
 */
export function addConfigOptions(command: Command, fields?: readonly (keyof ConfigInput)[]): Command {
  for (const flag of CONFIG_FLAGS) {
    if (fields ? !fields.includes(flag.field) : SERVE_ONLY_FIELDS.includes(flag.field)) continue;
    const option = new Option(flag.flags, `${flag.help} [${envOf(flag.field)}]`);
    if (flag.repeatable)
      option.argParser((value: string, previous?: string) => (previous ? `${previous},${value}` : value));
    command.addOption(option);
  }
  return command;
}

/**
 * The ConfigInput of a command's parsed options (of `fields` only, when given); absent flags stay
 * undefined, so loadConfig reads their variables.
 */
export function configInputOf(
  options: Readonly<Record<string, unknown>>,
  fields?: readonly (keyof ConfigInput)[],
): ConfigInput {
  const input: ConfigInput = {};
  for (const flag of CONFIG_FLAGS) {
    if (fields && !fields.includes(flag.field)) continue;
    const value = options[flag.field];
    if (typeof value === "string") input[flag.field] = value;
  }
  return input;
}
