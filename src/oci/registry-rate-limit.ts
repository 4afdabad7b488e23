import type { IncomingMessage, ServerResponse } from "node:http";
import { rateLimitKey } from "../core/rate-limit-key.js";
import { rateLimitHeaders, type TokenBuckets } from "../core/token-buckets.js";
import { OciError } from "./oci-errors.js";
import type { RegistryAuthenticator } from "./registry-auth.js";
import type { RegistryRoute } from "./routes.js";

/** The registry's two budgets (ADR 0043), as Keppel keeps them apart. */
export type RegistryBudget = "pull" | "push";

/**
 * The budget a registry request is charged to: everything under `/blobs/uploads/` (starting,
 * sending, finishing, checking and cancelling an upload) and every other write (PUT or DELETE of a
 * manifest, DELETE of a blob) is push; reads (GET and HEAD of `/v2/`, manifests, blobs, tags,
 * referrers and tag history) and `/token` (GET, or the OAuth2 form POST: every pull starts there)
 * are pull.
 */
export function budgetOf(route: RegistryRoute, method: string): RegistryBudget {
  if (route.kind === "uploads" || route.kind === "upload") return "push";
  if (route.kind === "token") return "pull";
  return method === "GET" || method === "HEAD" ? "pull" : "push";
}

/** Charges registry requests to their caller's bucket of their budget. */
export interface RegistryRateLimiter {
  /**
   * Charges the request (a route and method the registry serves) to its budget's bucket, when
   * that budget is limited: sets the rate limit headers on `res` (kept by whatever answer
   * follows) and throws `TOOMANYREQUESTS` (429, with `Retry-After`) when the bucket is empty.
   * The caller is the identity of a token that verifies (an expired one still names its
   * identity: an upload outlives its token), else `clientAddress` (a trusted proxy's
   * `X-Forwarded-For` counted: see `clientAddressOf`).
   */
  charge(
    req: IncomingMessage,
    res: ServerResponse,
    route: RegistryRoute,
    clientAddress: string,
  ): Promise<void>;
}

/** The registry's limiter over each limited budget's buckets; `auth` names callers. */
export function createRegistryRateLimiter(opts: {
  buckets: Partial<Record<RegistryBudget, TokenBuckets>>;
  auth: RegistryAuthenticator;
}): RegistryRateLimiter {
  const { buckets, auth } = opts;

  /** The identity a request's credentials verify as; undefined for none, anonymous, or invalid. */
  const identityOf = async (req: IncomingMessage): Promise<string | undefined> => {
    if (!req.headers.authorization) return undefined;
    try {
      // Verified tokens are cached: the handler's own check that follows costs a lookup.
      const caller = await auth.authenticate(req.headers, { allowExpired: true });
      return caller.anonymous ? undefined : caller.principal?.identityUid;
    } catch {
      return undefined; // the handler answers the bad credential; it is charged to the address
    }
  };

  return {
    async charge(req, res, route, clientAddress) {
      const budget = budgetOf(route, req.method ?? "GET");
      const bucket = buckets[budget];
      if (bucket === undefined) return;
      const verdict = bucket.take(rateLimitKey(await identityOf(req), clientAddress));
      for (const [name, value] of Object.entries(rateLimitHeaders(verdict))) res.setHeader(name, value);
      if (!verdict.allowed) {
        throw new OciError(
          "TOOMANYREQUESTS",
          `too many ${budget} requests: the limit is ${bucket.limit.text} per caller; retry in ${verdict.retryAfterSeconds} s`,
          { budget, limit: bucket.limit.text, retryAfterSeconds: verdict.retryAfterSeconds },
        );
      }
    },
  };
}
