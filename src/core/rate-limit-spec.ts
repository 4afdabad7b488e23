/**
 * One token bucket's parameters (ADR 0043): it refills `perSecond` tokens a second, holds at most
 * `burst`, and each request takes one.
 */
export interface RateLimit {
  /** Tokens added per second (> 0). */
  readonly perSecond: number;
  /** The bucket's capacity: the most requests let through at once after a quiet spell (≥ 1). */
  readonly burst: number;
  /** The limit written back in the flag's syntax (`50/s,burst=100`), for messages. */
  readonly text: string;
}

/** The registry's two budgets (ADR 0043); a budget left out is not limited. */
export interface RegistryRateLimits {
  readonly pull?: RateLimit | undefined;
  readonly push?: RateLimit | undefined;
}

/** A rate limit written wrongly; its message says what is wrong and what is expected. */
export class RateLimitSpecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RateLimitSpecError";
  }
}

/** The largest request count and burst accepted (a million: far beyond what one process serves). */
export const MAX_RATE_LIMIT_COUNT = 1_000_000;

const UNIT_SECONDS = { s: 1, m: 60, h: 3600 } as const;
const RATE = /^(\d+)\/(s|m|h)$/;
const WHOLE = /^\d+$/;
const SYNTAX = "<requests>/<s|m|h>[,burst=<n>], e.g. 50/s,burst=100";

/**
 * Parses a rate limit: `<requests>/<s|m|h>` (per second, minute or hour), optionally followed by
 * `,burst=<n>`. Both numbers are whole, from 1 to {@link MAX_RATE_LIMIT_COUNT}; without `burst`,
 * the bucket holds the rate's own count (`600/m` lets 600 through at once). Spaces around the
 * parts are ignored. Throws {@link RateLimitSpecError} naming the part that is wrong.
 */
export function parseRateLimit(spec: string): RateLimit {
  const parts = spec.split(",").map((part) => part.trim());
  const rate = RATE.exec(parts[0] ?? "");
  if (!rate) throw new RateLimitSpecError(`"${clip(parts[0] ?? "")}" is not a rate: write ${SYNTAX}`);
  const count = wholeNumber(rate[1]!, "the request count");
  const unit = rate[2] as keyof typeof UNIT_SECONDS;
  let burst: number | undefined;
  for (const option of parts.slice(1)) {
    const eq = option.indexOf("=");
    const key = (eq < 0 ? option : option.slice(0, eq)).trim();
    if (key !== "burst") {
      throw new RateLimitSpecError(`unknown option "${clip(key)}": the only option is burst=<n> (${SYNTAX})`);
    }
    if (burst !== undefined) throw new RateLimitSpecError("burst is given twice");
    burst = wholeNumber(eq < 0 ? "" : option.slice(eq + 1).trim(), "burst");
  }
  burst ??= count;
  return {
    perSecond: count / UNIT_SECONDS[unit],
    burst,
    text: `${count}/${unit},burst=${burst}`,
  };
}

/**
 * Parses the registry's budgets: `pull=<limit>;push=<limit>`, each `<limit>` as
 * {@link parseRateLimit} reads it; either may be left out (that budget is then not limited), and
 * neither may be given twice. Throws {@link RateLimitSpecError}.
 */
export function parseRegistryRateLimits(spec: string): RegistryRateLimits {
  const budgets: { pull?: RateLimit; push?: RateLimit } = {};
  const entries = spec
    .split(";")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  if (entries.length === 0) {
    throw new RateLimitSpecError(
      "no budget given: write pull=<limit>;push=<limit>, e.g. pull=50/s,burst=100",
    );
  }
  for (const entry of entries) {
    const eq = entry.indexOf("=");
    const name = (eq < 0 ? entry : entry.slice(0, eq)).trim();
    if (name !== "pull" && name !== "push") {
      throw new RateLimitSpecError(
        `"${clip(name)}" is not a budget: write pull=<limit> and/or push=<limit>, separated by ";"`,
      );
    }
    if (budgets[name] !== undefined) throw new RateLimitSpecError(`the ${name} budget is given twice`);
    if (eq < 0) throw new RateLimitSpecError(`${name}: missing "=<limit>", e.g. ${name}=10/s,burst=20`);
    try {
      budgets[name] = parseRateLimit(entry.slice(eq + 1));
    } catch (err) {
      if (err instanceof RateLimitSpecError) throw new RateLimitSpecError(`${name}: ${err.message}`);
      throw err;
    }
  }
  return budgets;
}

function wholeNumber(text: string, what: string): number {
  const n = WHOLE.test(text) ? Number(text) : Number.NaN;
  if (!(n >= 1 && n <= MAX_RATE_LIMIT_COUNT)) {
    throw new RateLimitSpecError(
      `${what} must be a whole number from 1 to ${MAX_RATE_LIMIT_COUNT} (got "${clip(text)}")`,
    );
  }
  return n;
}

/** At most 40 characters of what the operator wrote, for a message. */
function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
