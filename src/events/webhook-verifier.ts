import { createHash, timingSafeEqual } from "node:crypto";
import { createRemoteJWKSet, type JWTVerifyGetKey, errors as joseErrors, jwtVerify } from "jose";

/**
 * Verification of Wharf's webhook deliveries, for receivers written in TypeScript (exported as
 * `wharf/webhook-verifier`). Self-contained on purpose: it depends only on node:crypto and jose.
 *
 * ```ts
 * import { createWebhookVerifier, WebhookVerificationError } from "wharf/webhook-verifier";
 * const verify = createWebhookVerifier({ issuer: "https://wharf.example.com", group: ORG_UID });
 * // in your HTTP handler, with the raw body bytes:
 * try {
 *   const event = await verify(request.headers, rawBody);
 *   if (event.type === "dev.wharf.registry.push.v1") deploy(event.body);
 * } catch (err) {
 *   if (err instanceof WebhookVerificationError) return respond(err.status, err.message);
 *   throw err;
 * }
 * ```
 */

/** Why a delivery was refused, with the status a receiver should answer (400, 401 or 403). */
export class WebhookVerificationError extends Error {
  constructor(
    readonly status: 400 | 401 | 403,
    message: string,
  ) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

export interface WebhookVerifierOptions {
  /** Wharf's issuer URL (its public API URL), the `iss` of delivery tokens. */
  issuer: string;
  /**
   * The uid of the group the subscription is at: the token's `sub` must be `webhook:<group>`.
   * Without it any Wharf subscription's delivery is accepted.
   */
  group?: string;
  /** Where the issuer's keys are; default `<issuer>/.well-known/jwks.json`. */
  jwksUrl?: string;
  /** Key lookup to use instead of fetching `jwksUrl` (e.g. a local JWKS via jose's createLocalJWKSet). */
  keys?: JWTVerifyGetKey;
  /** Allowed clock skew in seconds (default 60). */
  clockToleranceSeconds?: number;
}

/** A delivery that verified: its CloudEvents attributes and its decoded body. */
export interface VerifiedWebhookEvent {
  id: string;
  type: string;
  source: string;
  /** The resource uid (the repo for registry events). */
  subject: string;
  /** The uidp the event belongs to. */
  group: string;
  time: string;
  /** Every `ce-*` header, without the prefix. */
  attributes: Record<string, string>;
  /** Who caused the event: identity uid and, for exchanged tokens, the upstream token's claims. */
  actor: { subject: string; act?: Record<string, unknown> };
  /** The resource (creates, updates), the delete request (deletes), or the push/pull record. */
  body: unknown;
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function headerOf(headers: HeaderSource, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

function ceAttributes(headers: HeaderSource): Record<string, string> {
  const out: Record<string, string> = {};
  const entries: [string, string | string[] | undefined][] =
    headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    if (lower.startsWith("ce-") && value !== undefined) {
      out[lower.slice(3)] = Array.isArray(value) ? (value[0] ?? "") : value;
    }
  }
  return out;
}

/**
 * Returns a function that verifies one delivery: the bearer token (ES256, from `issuer`, audience
 * `customer`, `sub` = `webhook:<group>`, not expired) and that its `webhook.digest` claim is the
 * SHA-256 of exactly `body`. Throws WebhookVerificationError: 401 without a bearer token, 403 for a
 * token that does not verify or does not match the body or group, 400 for a malformed CloudEvent.
 */
export function createWebhookVerifier(
  options: WebhookVerifierOptions,
): (headers: HeaderSource, body: string | Uint8Array) => Promise<VerifiedWebhookEvent> {
  const issuer = options.issuer.replace(/\/+$/, "");
  const keys =
    options.keys ?? createRemoteJWKSet(new URL(options.jwksUrl ?? `${issuer}/.well-known/jwks.json`));
  return async (headers, body) => {
    const authorization = headerOf(headers, "authorization");
    const match = authorization === undefined ? null : /^Bearer\s+(\S+)$/i.exec(authorization);
    if (!match?.[1]) throw new WebhookVerificationError(401, "no bearer token");
    let claims: Record<string, unknown>;
    try {
      ({ payload: claims } = await jwtVerify(match[1], keys, {
        issuer,
        audience: "customer",
        algorithms: ["ES256"],
        clockTolerance: options.clockToleranceSeconds ?? 60,
        requiredClaims: ["exp", "sub"],
      }));
    } catch (err) {
      if (err instanceof joseErrors.JOSEError) {
        throw new WebhookVerificationError(403, `token does not verify: ${err.code}`);
      }
      throw err;
    }
    const sub = String(claims.sub);
    if (!sub.startsWith("webhook:")) throw new WebhookVerificationError(403, "token is not a webhook token");
    if (options.group !== undefined && sub !== `webhook:${options.group}`) {
      throw new WebhookVerificationError(403, "token is for another group's subscription");
    }
    const claimed = (claims.webhook as { digest?: unknown } | undefined)?.digest;
    const actual = `sha256:${createHash("sha256").update(body).digest("hex")}`;
    if (typeof claimed !== "string" || !sameText(claimed, actual)) {
      throw new WebhookVerificationError(403, "body does not match the signed digest");
    }
    const attributes = ceAttributes(headers);
    for (const required of ["id", "specversion", "source", "type"]) {
      if (!attributes[required]) throw new WebhookVerificationError(400, `missing ce-${required} header`);
    }
    let data: { actor?: { subject: string; act?: Record<string, unknown> }; body?: unknown };
    try {
      data = JSON.parse(typeof body === "string" ? body : Buffer.from(body).toString("utf8"));
    } catch {
      throw new WebhookVerificationError(400, "body is not JSON");
    }
    return {
      id: attributes.id as string,
      type: attributes.type as string,
      source: attributes.source as string,
      subject: attributes.subject ?? "",
      group: attributes.group ?? "",
      time: attributes.time ?? "",
      attributes,
      actor: data.actor ?? { subject: "" },
      body: data.body,
    };
  };
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
