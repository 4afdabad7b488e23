import { createIssuer } from "../../auth/issuer.js";
import { recordedIssuerUrls } from "../../auth/issuer-urls.js";
import { MAX_TOKEN_TTL_SECONDS } from "../../auth/token-limits.js";
import { ADMIN_IDENTITY_UID, ensureAdminIdentity } from "../../authz/admin-identity.js";
import { ConfigError, type ConfigInput, loadConfig, publicUrlOf } from "../../config/config.js";
import { openConfiguredStore } from "../../config/open-configured-store.js";
import { systemClock } from "../../core/clock.js";
import { parseDurationSeconds } from "../../core/duration.js";
import type { CommandOutput } from "./command-output.js";

/**
 * `wharf admin token`: mints a token for the built-in platform administrator with the issuer keys
 * kept in the metadata store (so it must run where the data lives, with the same --data-dir or
 * --database-url as the server). `audience` is `api` (default), `registry`, or an explicit URL.
 * The issuer and registry URLs are `--public-url`/`--registry-url` when given (flag or variable),
 * else those the server recorded when it started, else the configured defaults (said on stderr).
 * A ttl that is not a duration, or longer than 24 h, is a ConfigError (exit 2). Prints on `out`.
 */
export async function runAdminToken(
  input: ConfigInput,
  opts: { ttl: string; audience: string },
  out: CommandOutput,
): Promise<number> {
  const config = loadConfig(input);
  const ttlSeconds = parseDurationSeconds(opts.ttl);
  if (ttlSeconds === undefined)
    throw new ConfigError(`--ttl must be a duration like 1h, 30m or 3600s (got "${opts.ttl}")`);
  if (ttlSeconds > MAX_TOKEN_TTL_SECONDS)
    throw new ConfigError(`--ttl must be at most 24h (got "${opts.ttl}")`);
  const store = await openConfiguredStore(config);
  try {
    const recorded = await recordedIssuerUrls(store.settings);
    const urlOf = (flag: string, configured: string, fromServer: string | undefined, fallback: string) => {
      if (configured !== "") return configured;
      if (fromServer !== undefined) return fromServer;
      out.stderr.write(
        `wharf: no server has recorded its URL in this database yet: using ${fallback} (give --${flag} to choose)\n`,
      );
      return fallback;
    };
    const issuerUrl = urlOf("public-url", config.publicUrl, recorded.apiUrl, publicUrlOf("", config.apiAddr));
    const audience =
      opts.audience === "api"
        ? issuerUrl
        : opts.audience === "registry"
          ? urlOf(
              "registry-url",
              config.registryUrl,
              recorded.registryUrl,
              publicUrlOf("", config.registryAddr),
            )
          : opts.audience;
    await ensureAdminIdentity(store, systemClock.now());
    const issuer = createIssuer({ store, issuerUrl, clock: systemClock });
    const token = await issuer.mint({ subject: ADMIN_IDENTITY_UID, audience, ttlSeconds });
    out.stdout.write(`${token}\n`);
    return 0;
  } finally {
    await store.close();
  }
}
