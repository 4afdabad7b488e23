import { createIssuer } from "../auth/issuer.js";
import { ADMIN_IDENTITY_UID, ensureAdminIdentity } from "../authz/admin-identity.js";
import { ConfigError, type ConfigInput, loadConfig, publicUrlOf } from "../config/config.js";
import { openConfiguredStore } from "../config/open-configured-store.js";
import { systemClock } from "../core/clock.js";
import { parseDurationSeconds } from "./duration.js";

/**
 * `wharf admin token`: mints a token for the built-in platform administrator with the issuer keys
 * kept in the metadata store (so it must run where the data lives, with the same --data-dir or
 * --database-url as the server). `audience` is `api` (default), `registry`, or an explicit URL.
 */
export async function runAdminToken(
  input: ConfigInput,
  opts: { ttl: string; audience: string },
): Promise<number> {
  const config = loadConfig(input);
  const ttlSeconds = parseDurationSeconds(opts.ttl);
  if (ttlSeconds === undefined)
    throw new ConfigError(`--ttl must be a duration like 1h, 30m or 3600s (got "${opts.ttl}")`);
  const issuerUrl = publicUrlOf(config.publicUrl, config.apiAddr);
  const audience =
    opts.audience === "api"
      ? issuerUrl
      : opts.audience === "registry"
        ? publicUrlOf(config.registryUrl, config.registryAddr)
        : opts.audience;
  const store = await openConfiguredStore(config);
  try {
    await ensureAdminIdentity(store, systemClock.now());
    const issuer = createIssuer({ store, issuerUrl, clock: systemClock });
    const token = await issuer.mint({ subject: ADMIN_IDENTITY_UID, audience, ttlSeconds });
    process.stdout.write(`${token}\n`);
    return 0;
  } finally {
    await store.close();
  }
}
