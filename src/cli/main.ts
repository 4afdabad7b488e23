import { parseArgs } from "node:util";
import { ConfigError, type ConfigInput } from "../config/config.js";
import { runAdminToken } from "./admin-token.js";
import { runServe } from "./serve.js";

const USAGE = `wharf: a self-hosted container registry platform

Usage:
  wharf serve [options]                 run the platform API, token issuer and registry
  wharf admin token [--ttl 1h] [--audience api|registry|<url>] [options]
                                        print a token of the built-in platform administrator
  wharf help | version

Options (each also as an environment variable):
  --data-dir DIR          WHARF_DATA_DIR       data folder (default ./wharf-data)
  --api-addr HOST:PORT    WHARF_API_ADDR       platform API listener (default 127.0.0.1:8080)
  --registry-addr H:P     WHARF_REGISTRY_ADDR  registry listener (default 127.0.0.1:5000)
  --database-url URL      WHARF_DATABASE_URL   postgres://… (default: SQLite in the data dir)
  --public-url URL        WHARF_PUBLIC_URL     public URL of the API and issuer (default http://<api-addr>)
  --registry-url URL      WHARF_REGISTRY_URL   public URL of the registry (default http://<registry-addr>)
`;

const CONFIG_OPTIONS = {
  "data-dir": { type: "string" },
  "api-addr": { type: "string" },
  "registry-addr": { type: "string" },
  "database-url": { type: "string" },
  "public-url": { type: "string" },
  "registry-url": { type: "string" },
} as const;

/** Runs the `wharf` command line; resolves to the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "serve": {
        const { values } = parseArgs({ args: rest, options: CONFIG_OPTIONS, strict: true });
        return await runServe(configInput(values));
      }
      case "admin": {
        const [sub, ...args] = rest;
        if (sub !== "token") break;
        const { values } = parseArgs({
          args,
          options: { ...CONFIG_OPTIONS, ttl: { type: "string" }, audience: { type: "string" } },
          strict: true,
        });
        return await runAdminToken(configInput(values), {
          ttl: values.ttl ?? "1h",
          audience: values.audience ?? "api",
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
    if (err instanceof ConfigError || (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      process.stderr.write(`wharf: ${(err as Error).message}\n`);
      return 2;
    }
    throw err;
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
  };
}
