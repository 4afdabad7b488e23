import { type ConfigInput, loadConfig, redactUrl } from "../config/config.js";
import { sqlitePathOf } from "../config/open-configured-store.js";
import { startServer } from "../server.js";

/** `wharf serve`: starts everything and runs until SIGINT/SIGTERM, then shuts down gracefully. */
export async function runServe(input: ConfigInput): Promise<number> {
  const config = loadConfig(input);
  const server = await startServer(config);
  const storage = config.databaseUrl ? redactUrl(config.databaseUrl) : sqlitePathOf(config);
  process.stderr.write(
    `wharf: platform API on ${server.apiUrl}\nwharf: registry on ${server.registryUrl}\nwharf: metadata in ${storage}\n`,
  );
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  process.stderr.write("wharf: shutting down\n");
  await server.close();
  return 0;
}
