import { type ConfigInput, loadConfig, redactUrl } from "../../config/config.js";
import { prepareConfiguredDatabase, sqlitePathOf } from "../../config/open-configured-store.js";
import { startServer } from "../../server.js";
import { serveUntilSignalled } from "./graceful-stop.js";

/**
 * `wharf serve`: readies the database (creating a missing PostgreSQL database when the role may),
 * starts everything and runs until SIGINT/SIGTERM, then shuts down gracefully (ADR 0035) and
 * resolves 0. A start-up failure rejects with its cause (the CLI prints it as one line).
 */
export async function runServe(input: ConfigInput): Promise<number> {
  const config = loadConfig(input);
  await prepareConfiguredDatabase(config);
  const server = await startServer(config);
  const storage = config.databaseUrl ? redactUrl(config.databaseUrl) : sqlitePathOf(config);
  process.stderr.write(
    `wharf: platform API on ${server.apiUrl}\nwharf: registry on ${server.registryUrl}\nwharf: metadata in ${storage}\n`,
  );
  await serveUntilSignalled(server, config.shutdown, (line) =>
    process.stdout.write(`${JSON.stringify(line)}\n`),
  );
  // Everything is closed; a handle left behind (a request cut mid-way) must not hold the exit.
  setTimeout(() => process.exit(0), 2_000).unref();
  return 0;
}
