import type { Clock } from "../../core/clock.js";
import { errorForStatus, type Redact, readSome } from "./remote-errors.js";
import { type RemoteCredentials, RemoteError } from "./remote-registry.js";
import {
  discard,
  type RemoteRequest,
  type RemoteResponse,
  type RemoteTransport,
} from "./remote-transport.js";
import { createTokenCache } from "./token-cache.js";
import { type AuthChallenge, parseChallenges } from "./www-authenticate.js";

/** Largest token answer read (JWTs with many claims stay far below). */
const MAX_TOKEN_ANSWER_BYTES = 256 * 1024;

/** A request that needs authorization for `scopes` (`repository:<name>:pull,push`, `registry:catalog:*`). */
export interface ScopedRequest extends RemoteRequest {
  scopes: readonly string[];
}

/** Sends requests with the right Authorization, answering auth challenges. */
export interface RemoteAuthenticator {
  /**
   * Sends `request`; on 401 answers the challenge (Bearer: a token from its realm; Basic: the
   * credentials) and sends it once more. Throws `unauthorized` when that is refused too, or when
   * the body is a stream (it cannot be sent twice). Any other answer is returned as is.
   */
  send(request: ScopedRequest): Promise<RemoteResponse>;
}

/** What an authenticator needs. */
export interface RemoteAuthOptions {
  transport: RemoteTransport;
  credentials?: RemoteCredentials | undefined;
  clock: Clock;
  redact: Redact;
}

/**
 * Anonymous first; after a Basic challenge, Basic on every request; after a Bearer challenge, a
 * token per scope set from the realm (with Basic credentials when configured), cached until its
 * `expires_in` (60 s when not said), and fetched ahead for new scopes once the realm is known.
 */
export function createRemoteAuthenticator(options: RemoteAuthOptions): RemoteAuthenticator {
  const { transport, credentials, redact } = options;
  const tokens = createTokenCache(options.clock);
  const basic = credentials
    ? `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64")}`
    : undefined;
  let basicScheme = false;
  let bearer: { realm: string; service: string | undefined } | undefined;

  /** Token fetches under way, by realm, service and scopes: concurrent calls share one. */
  const pending = new Map<string, Promise<string>>();
  const fetchToken = (
    realm: string,
    service: string | undefined,
    scopes: readonly string[],
    request: ScopedRequest,
  ): Promise<string> => {
    const key = `${realm}\n${service ?? ""}\n${scopeKey(scopes)}`;
    let fetching = pending.get(key);
    if (!fetching) {
      // Not tied to this caller's signal: others may be waiting on it (the timeout bounds it).
      fetching = requestToken(realm, service, scopes, { ...request, signal: undefined });
      pending.set(key, fetching);
      const done = () => pending.delete(key);
      fetching.then(done, done);
    }
    return abortable(fetching, request.signal);
  };
  const requestToken = async (
    realm: string,
    service: string | undefined,
    scopes: readonly string[],
    request: ScopedRequest,
  ): Promise<string> => {
    const what = `token for ${request.what}`;
    let url: URL;
    try {
      url = new URL(realm);
    } catch {
      throw new RemoteError("invalid-response", `${request.what}: the auth challenge's realm is not a URL`);
    }
    if (service !== undefined) url.searchParams.set("service", service);
    for (const scope of scopes) url.searchParams.append("scope", scope);
    const headers: Record<string, string> = { accept: "application/json" };
    if (basic) headers.authorization = basic;
    const res = await transport.send({
      method: "GET",
      url,
      headers,
      follow: true,
      signal: request.signal,
      what: `${what} at ${url.origin}${url.pathname}`,
    });
    if (res.status !== 200) {
      const err = await errorForStatus(
        `${what} at ${url.origin}${url.pathname}`,
        res.status,
        res.body,
        redact,
      );
      if (res.status === 401) {
        throw new RemoteError(
          "unauthorized",
          `${err.message}: the token service refused ${credentials ? "the credentials" : "anonymous access"}`,
          401,
        );
      }
      throw err;
    }
    const text = (await readSome(res.body, MAX_TOKEN_ANSWER_BYTES + 1)).toString("utf8");
    let answer: { token?: unknown; access_token?: unknown; expires_in?: unknown } | undefined;
    try {
      answer = text.length > MAX_TOKEN_ANSWER_BYTES ? undefined : JSON.parse(text);
    } catch {
      answer = undefined;
    }
    const token =
      typeof answer?.token === "string" && answer.token !== ""
        ? answer.token
        : typeof answer?.access_token === "string" && answer.access_token !== ""
          ? answer.access_token
          : undefined;
    if (!token || /[\r\n]/.test(token)) {
      throw new RemoteError("invalid-response", `${what}: the token service answered no token`);
    }
    tokens.set(scopeKey(request.scopes), token, answer?.expires_in);
    return token;
  };

  const authorization = async (request: ScopedRequest): Promise<string | undefined> => {
    const key = scopeKey(request.scopes);
    const cached = tokens.get(key);
    if (cached) return `Bearer ${cached}`;
    if (bearer) return `Bearer ${await fetchToken(bearer.realm, bearer.service, request.scopes, request)}`;
    if (basicScheme) return basic;
    return undefined;
  };

  const withAuth = (request: ScopedRequest, auth: string | undefined): RemoteRequest => ({
    ...request,
    headers: auth === undefined ? request.headers : { ...request.headers, authorization: auth },
  });

  return {
    async send(request) {
      const sent = await authorization(request);
      const first = await transport.send(withAuth(request, sent));
      if (first.status !== 401) return first;
      const challenges = parseChallenges(wwwAuthenticate(first.headers));
      const refused = await errorForStatus(request.what, 401, first.body, redact);
      const replayable = request.body === undefined || request.body instanceof Uint8Array;
      const unauthorized = (why: string) =>
        new RemoteError("unauthorized", `${refused.message}${why ? `: ${why}` : ""}`, 401);
      if (!replayable) throw unauthorized("the request's body cannot be sent again");
      const challenge = pick(challenges);
      let next: string | undefined;
      if (challenge?.scheme === "bearer") {
        const realm = challenge.params.realm;
        if (!realm)
          throw new RemoteError(
            "invalid-response",
            `${request.what}: a Bearer challenge without a realm`,
            401,
          );
        bearer = { realm, service: challenge.params.service };
        const key = scopeKey(request.scopes);
        const current = tokens.get(key);
        if (current !== undefined && `Bearer ${current}` !== sent) {
          // Another call got a token for these scopes since this one was sent.
          next = `Bearer ${current}`;
        } else {
          tokens.delete(key);
          const asked = challenge.params.scope?.split(" ").filter(Boolean) ?? [];
          const scopes = [...new Set([...request.scopes, ...asked])];
          next = `Bearer ${await fetchToken(realm, bearer.service, scopes, request)}`;
        }
      } else if (challenge?.scheme === "basic") {
        if (!basic) throw unauthorized("the remote wants credentials and none are configured");
        if (sent === basic) throw unauthorized("the remote refused the credentials");
        basicScheme = true;
        next = basic;
      } else {
        throw unauthorized(credentials ? "no auth challenge Wharf can answer" : "");
      }
      const second = await transport.send(withAuth(request, next));
      if (second.status !== 401) return second;
      discard(second.body);
      throw unauthorized(
        credentials ? "the remote refused the credentials" : "anonymous access is not allowed",
      );
    },
  };
}

/** `promise`, or the abort reason of `signal` as soon as it aborts (the work itself goes on). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}

/** The token cache key of a scope set. */
function scopeKey(scopes: readonly string[]): string {
  return [...scopes].sort().join(" ");
}

function wwwAuthenticate(headers: RemoteResponse["headers"]): string[] {
  const value = headers["www-authenticate"];
  return Array.isArray(value) ? value : value === undefined ? [] : [value];
}

/** Bearer when offered (it works anonymously too), else Basic. */
function pick(challenges: AuthChallenge[]): AuthChallenge | undefined {
  return challenges.find((c) => c.scheme === "bearer") ?? challenges.find((c) => c.scheme === "basic");
}
