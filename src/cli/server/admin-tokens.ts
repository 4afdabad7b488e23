import { TOKEN_ACCEPTANCE_HORIZON_MS } from "../../auth/token-limits.js";
import { revokeTokens } from "../../auth/token-revocations.js";
import { ConfigError, type ConfigInput, loadConfig } from "../../config/config.js";
import { openConfiguredStore } from "../../config/open-configured-store.js";
import { formatTimestamp, systemClock } from "../../core/clock.js";
import { isDomainError } from "../../core/errors.js";
import { MAX_PULL_TOKEN_TTL_SECONDS } from "../../federation/pull-token.js";
import { REFRESH_TOKEN_TTL_MS } from "../../federation/refresh-tokens.js";
import type { CommandOutput } from "./command-output.js";

/**
 * How long a revocation is kept past its cutoff: the longest anything it matches can still be
 * presented (issuer tokens, refresh tokens, pull tokens signed by their identity's keys).
 */
const REVOCATION_KEPT_MS = Math.max(
  TOKEN_ACCEPTANCE_HORIZON_MS,
  REFRESH_TOKEN_TTL_MS,
  MAX_PULL_TOKEN_TTL_SECONDS * 1000,
);

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * `wharf admin tokens revoke`: stores a revocation (see `revokeTokens`) that every server sharing
 * the database applies within seconds. Prints what it revoked on `out.stdout`. Bad flags are a
 * ConfigError (exit 2).
 */
export async function runAdminTokensRevoke(
  input: ConfigInput,
  opts: { subject?: string | undefined; issuedBefore?: string | undefined },
  out: CommandOutput,
): Promise<number> {
  const config = loadConfig(input);
  let issuedBefore: number | undefined;
  if (opts.issuedBefore !== undefined) {
    issuedBefore = RFC3339.test(opts.issuedBefore) ? Date.parse(opts.issuedBefore) : Number.NaN;
    if (Number.isNaN(issuedBefore))
      throw new ConfigError(
        `--issued-before must be an RFC 3339 time like 2026-01-28T12:00:00Z (got "${opts.issuedBefore}")`,
      );
  }
  if (opts.subject === undefined && issuedBefore === undefined)
    throw new ConfigError("give --subject, --issued-before, or both");
  const store = await openConfiguredStore(config);
  try {
    const request = {
      ...(opts.subject === undefined ? {} : { subject: opts.subject }),
      ...(issuedBefore === undefined ? {} : { issuedBefore }),
    };
    const row = await revokeTokens(store.tokenRevocations, request, {
      now: systemClock.now(),
      acceptedForMs: REVOCATION_KEPT_MS,
    });
    const whose = row.subject === undefined ? "every subject" : row.subject;
    out.stdout.write(
      `revoked the tokens of ${whose} issued before ${formatTimestamp(row.issuedBefore)}; servers refuse them within seconds\n`,
    );
    return 0;
  } catch (err) {
    if (isDomainError(err))
      throw new ConfigError(
        err.message
          .replace(/^Invalid argument: issued_before/, "--issued-before")
          .replace(/^Invalid argument: subject/, "--subject"),
      );
    throw err;
  } finally {
    await store.close();
  }
}
