import { parseArgs } from "node:util";
import type { ConfigInput } from "../config/config.js";
import { BlobStoreMismatchError } from "../storage/blob-store-identity.js";
import { ADMIN_USAGE, adminCommand } from "./admin.js";
import { AUTH_USAGE, runAuth } from "./auth.js";
import { isClientCommand } from "./client/routing.js";
import { commandHelp } from "./command-help.js";
import { importUsage } from "./import.js";
import { CLIENT_USAGE, PULL_TOKEN_USAGE } from "./usage.js";

/** The top-level usage text of `wharf` (also the head of docs/cli.md). */
export const USAGE = `wharf: a self-hosted container registry platform

Usage:
  wharf serve [options]                 run the platform API, token issuer and registry
${ADMIN_USAGE}  wharf gc [--window 720h] [--grace 1h] [options]
                                        remove manifests and blobs no tag, recent tag history
                                        (--window) or push in flight (--grace) can reach
${importUsage()}${AUTH_USAGE}${PULL_TOKEN_USAGE}${CLIENT_USAGE}  wharf help | version

Options (each also as an environment variable):
  --data-dir DIR          WHARF_DATA_DIR       data folder (default ./wharf-data)
  --api-addr HOST:PORT    WHARF_API_ADDR       platform API listener (default 127.0.0.1:8080)
  --registry-addr H:P     WHARF_REGISTRY_ADDR  registry listener (default 127.0.0.1:5000)
  --database-url URL      WHARF_DATABASE_URL   postgres://… (default: SQLite in the data dir)
  --public-url URL        WHARF_PUBLIC_URL     public URL of the API and issuer (default http://<api-addr>)
  --registry-url URL      WHARF_REGISTRY_URL   public URL of the registry (default http://<registry-addr>)
  --blob-store URL        WHARF_BLOB_STORE     blob storage: a folder (default <data-dir>/blobs) or
                                               s3://bucket/prefix?endpoint=…&region=…
  --public-namespace ORG  WHARF_PUBLIC_NAMESPACE  organization whose latest tags anyone may pull (default public)
  --gc-interval DURATION  WHARF_GC_INTERVAL    run garbage collection in the server this often (default 0: never)
  --terms-documents IDS   WHARF_TERMS_DOCUMENTS  legal documents groups may accept, comma-separated
                                               (default sfdpa.v1,guardener-tos.v1,skills-tos.v1)
  --login-issuer URL      WHARF_LOGIN_ISSUER   OpenID Connect issuer people log in through when they name no
                                               organization identity provider (default: none)
  --login-client-id ID    WHARF_LOGIN_CLIENT_ID      Wharf's client id at that issuer
  --login-client-secret S WHARF_LOGIN_CLIENT_SECRET  its client secret (prefer the variable; omit for PKCE-only clients)
  --events-allow-http BOOL  WHARF_EVENTS_ALLOW_HTTP  allow plain-http webhook sinks beyond loopback (default false)
  --events-sink-allow CIDRS WHARF_EVENTS_SINK_ALLOW  comma-separated ranges webhook sinks may reach although refused
                                               (link-local, metadata, multicast…; default none)
  --events-allow-loopback BOOL  WHARF_EVENTS_ALLOW_LOOPBACK  allow webhook sinks on loopback addresses (default false)
  --events-max-attempts N WHARF_EVENTS_MAX_ATTEMPTS  attempts before a delivery is given up on (default 20)
  --events-timeout DUR    WHARF_EVENTS_TIMEOUT time limit of one delivery attempt (default 10s)
  --events-lease DUR      WHARF_EVENTS_LEASE   how long a stopped process's deliveries wait before another
                                               process takes them over (default 60s)
  --metrics-public BOOL   WHARF_METRICS_PUBLIC serve /metrics without a token (default false: administrator only)
  --vuln-report-max-mb N  WHARF_VULN_REPORT_MAX_MB  largest vulnerability report an upload takes (default 256)
  --eol-grace-months N    WHARF_EOL_GRACE_MONTHS  months a tag stays in grace after its EOL date (default 6)

A start-up failure prints one line and exits 1 (WHARF_DEBUG=1 adds the stack); -h or --help after a
command prints its usage.
`;

const CONFIG_OPTIONS = {
  "data-dir": { type: "string" },
  "api-addr": { type: "string" },
  "registry-addr": { type: "string" },
  "database-url": { type: "string" },
  "public-url": { type: "string" },
  "registry-url": { type: "string" },
  "blob-store": { type: "string" },
  "public-namespace": { type: "string" },
  "gc-interval": { type: "string" },
  "terms-documents": { type: "string" },
  "login-issuer": { type: "string" },
  "login-client-id": { type: "string" },
  "login-client-secret": { type: "string" },
  "events-allow-http": { type: "string" },
  "events-sink-allow": { type: "string" },
  "events-allow-loopback": { type: "string" },
  "events-max-attempts": { type: "string" },
  "events-timeout": { type: "string" },
  "events-lease": { type: "string" },
  "metrics-public": { type: "string" },
  "vuln-report-max-mb": { type: "string" },
  "eol-grace-months": { type: "string" },
} as const;

/**
 * Runs the `wharf` command line; resolves to the process exit code: 0, 2 for a usage or
 * configuration error, 1 when the command fails (start-up failures print one line, no stack).
 * `-h`/`--help` after any command's words, or `wharf help <words>`, prints that command's usage
 * from USAGE and exits 0 without running it (see `commandHelp`). A command's module loads only
 * when it runs, so printing help loads none of the server's code.
 */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (isClientCommand(argv) || (command === "help" && isClientCommand(rest))) {
    // The everyday client commands (on the SDK, with their own parser and help): ADR 0028.
    const { runClient } = await import("./client/index.js");
    const args = command === "help" ? [...rest, "--help"] : argv;
    // Help starts with the command's lines of the top-level usage, then the command's own help.
    const summary = commandHelp(USAGE, "", args);
    if (summary !== undefined) process.stdout.write(`${summary}\n`);
    return runClient(args, { stdout: process.stdout, stderr: process.stderr, env: process.env });
  }
  if (command === "import" || (command === "help" && rest[0] === "import")) {
    // Its own help: the kinds, and each kind's usage with the importers' shared options.
    const { runImport } = await import("./import.js");
    const args = command === "help" ? [...rest.slice(1), "--help"] : rest;
    return runImport(args, { stdout: process.stdout, stderr: process.stderr });
  }
  const help = commandHelp(USAGE, USAGE.slice(USAGE.indexOf("Options (")), argv);
  if (help !== undefined) {
    process.stdout.write(help);
    return 0;
  }
  try {
    switch (command) {
      case "serve": {
        const { values } = parseArgs({ args: rest, options: CONFIG_OPTIONS, strict: true });
        const { runServe } = await import("./serve.js");
        return await runServe(configInput(values));
      }
      case "admin": {
        const admin = adminCommand(rest);
        if (!admin) break;
        const { values } = parseArgs({
          args: admin.args,
          options: { ...CONFIG_OPTIONS, ...admin.options, help: { type: "boolean", short: "h" } },
          strict: true,
        });
        if (values.help) {
          process.stdout.write(`Usage:\n${admin.usage}`);
          return 0;
        }
        return await admin.run(
          configInput(values as Partial<Record<keyof typeof CONFIG_OPTIONS, string>>),
          values,
        );
      }
      case "auth": {
        if (rest[0] === "pull-token") {
          const { runPullToken } = await import("./pull-token.js");
          return await runPullToken(rest.slice(1));
        }
        const code = await runAuth(rest);
        if (code !== undefined) return code;
        break;
      }
      case "gc": {
        const { values } = parseArgs({
          args: rest,
          options: { ...CONFIG_OPTIONS, window: { type: "string" }, grace: { type: "string" } },
          strict: true,
        });
        const { runGc } = await import("./gc.js");
        return await runGc(configInput(values), {
          window: values.window ?? "720h",
          grace: values.grace ?? "1h",
        });
      }
      case "version":
      case "--version":
        process.stdout.write("wharf 0.1.0\n");
        return 0;
      case "help":
      case "--help":
      case "-h":
      case undefined:
        process.stdout.write(USAGE);
        return command === undefined ? 2 : 0;
    }
    process.stderr.write(`wharf: unknown command "${argv.join(" ")}"\n\n${USAGE}`);
    return 2;
  } catch (err) {
    const { ConfigError } = await import("../config/config.js");
    const code = (err as { code?: unknown }).code;
    if (err instanceof ConfigError || (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS"))) {
      process.stderr.write(`wharf: ${(err as Error).message}\n`);
      return 2;
    }
    if (err instanceof BlobStoreMismatchError) {
      process.stderr.write(`wharf: ${err.message}\n`);
      return 1;
    }
    if (process.env.WHARF_DEBUG) process.stderr.write(`${(err as Error)?.stack ?? err}\n`);
    const { startupFailureLine } = await import("./startup-failure.js");
    process.stderr.write(`wharf: ${startupFailureLine(err)}\n`);
    return 1;
  }
}

function configInput(values: Partial<Record<keyof typeof CONFIG_OPTIONS, string>>): ConfigInput {
  return {
    dataDir: values["data-dir"],
    apiAddr: values["api-addr"],
    registryAddr: values["registry-addr"],
    databaseUrl: values["database-url"],
    publicUrl: values["public-url"],
    registryUrl: values["registry-url"],
    blobStore: values["blob-store"],
    publicNamespace: values["public-namespace"],
    gcInterval: values["gc-interval"],
    termsDocuments: values["terms-documents"],
    loginIssuer: values["login-issuer"],
    loginClientId: values["login-client-id"],
    loginClientSecret: values["login-client-secret"],
    eventsAllowHttp: values["events-allow-http"],
    eventsSinkAllow: values["events-sink-allow"],
    eventsAllowLoopback: values["events-allow-loopback"],
    eventsMaxAttempts: values["events-max-attempts"],
    eventsTimeout: values["events-timeout"],
    eventsLease: values["events-lease"],
    metricsPublic: values["metrics-public"],
    vulnReportMaxMb: values["vuln-report-max-mb"],
    eolGraceMonths: values["eol-grace-months"],
  };
}
