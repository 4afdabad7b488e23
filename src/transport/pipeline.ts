import { randomUUID } from "node:crypto";
import type { Message } from "@bufbuild/protobuf";
import type { CallAuditor } from "../core/call-auditor.js";
import { Cancellation } from "../core/cancellation.js";
import type { Clock } from "../core/clock.js";
import type { Access, CallAudit, Principal, RequestContext } from "../core/context.js";
import { type DomainError, unauthenticated } from "../core/errors.js";
import { type Span, startRequestTrace, withinSpan } from "../core/tracing.js";
import { requireUidp } from "../core/uidp.js";
import type { ApiMetrics } from "../observability/api-metrics.js";
import { CODE_NAMES, toDomainError } from "./error-mapping.js";
import type { MethodEntry } from "./method-table.js";

/** Turns a bearer token into the verified caller. */
export interface Authenticator {
  /**
   * Verifies `token` (the text after `Bearer `). Throws a DomainError UNAUTHENTICATED for an
   * invalid, expired or otherwise unacceptable token; any other throw is treated as INTERNAL.
   */
  authenticate(token: string): Promise<Principal>;
}

/** Builds the per-request `Access` of a caller; `undefined` = anonymous (IAM-disabled RPCs). */
export type AccessFactory = (principal: Principal | undefined) => Access;

/** Receives exactly one structured line per request. Must not throw (a throw is swallowed). */
export type RequestLogger = (line: Record<string, unknown>) => void;

/** Wire protocol of a request, as logged. */
export type Protocol = "rest" | "connect" | "grpc" | "grpc-web" | "http";

/** The mutable record of one request, from arrival to its log line. */
export interface CallRecord {
  readonly requestId: string;
  /** The trace it belongs to: its `traceparent`'s, or a new one (logged with or without tracing). */
  readonly traceId: string;
  /** Its server span; undefined when tracing is off. */
  readonly span: Span | undefined;
  /**
   * Who sent it: the peer, or the client a trusted proxy forwarded for (see `clientAddressOf`);
   * anonymous callers are rate limited by it. Undefined when the socket is gone.
   */
  readonly clientAddress: string | undefined;
  /** The request's User-Agent header, if any (for the audit log). */
  readonly userAgent?: string | undefined;
  /** `performance.now()` at arrival. */
  readonly startedAt: number;
  protocol: Protocol;
  readonly httpMethod: string;
  /** URL path without the query string. */
  readonly path: string;
  /** `package.Service/Method` once the request is routed to an RPC. */
  rpc: string | undefined;
  identityUid: string | undefined;
  /** gRPC code of the outcome (0 = OK) once known. */
  code: number | undefined;
  /** The real cause of an INTERNAL error: logged, never sent. */
  cause: unknown;
  logged: boolean;
  /** A probe (health, readiness): logged only when something threw (`cause`), still counted. */
  readonly quiet: boolean;
  /**
   * Whether the call was given up on (its deadline passed, its client went away): the transport
   * aborts it, the handler's `RequestContext.signal` follows it, and its reason is the outcome.
   */
  readonly cancellation: Cancellation;
  /** The rate limit headers of the call, sent with its answer or error; none while limits are off. */
  rateLimitHeaders: Record<string, string> | undefined;
}

export type { CallAuditor, FinishedCall } from "../core/call-auditor.js";

/** Options of {@link createPipeline}. */
export interface PipelineOptions {
  authenticator: Authenticator;
  accessFor: AccessFactory;
  clock: Clock;
  logger: RequestLogger;
  /** Counts every finished request by route and outcome; none when omitted. */
  metrics?: ApiMetrics | undefined;
  /**
   * Charges each RPC to its caller's bucket once the caller is known (an `ApiRateLimiter`,
   * ADR 0043): throws RESOURCE_EXHAUSTED when over; none (and no cost) when limits are off.
   */
  rateLimit?: ((record: CallRecord, identityUid: string | undefined) => void) | undefined;
  /**
   * The audit log of mutating calls (ADR 0048): their contexts carry a CallAudit, and `finished`
   * writes what the handler's change did not. None (and no audit work) when omitted.
   */
  audit?: CallAuditor | undefined;
}

/** The one cross-cutting path of every API request, whatever its protocol. */
export interface Pipeline {
  /**
   * Starts a request: honours a sane incoming `x-request-id` (1–128 of `[A-Za-z0-9._~:@+=/-]`),
   * else assigns a random UUID, and a valid incoming `traceparent` (its trace id is logged and,
   * with tracing on, the request's server span continues it), else starts a new trace. The caller
   * echoes `requestId` in the response header.
   */
  begin(init: {
    httpMethod: string;
    path: string;
    protocol: Protocol;
    requestIdHeader: string | string[] | undefined;
    traceparentHeader?: string | string[] | undefined;
    quiet?: boolean;
    clientAddress?: string | undefined;
    userAgent?: string | string[] | undefined;
  }): CallRecord;
  /**
   * Runs one RPC: authentication per the method's IAM annotation (`disabled` → anonymous;
   * otherwise `authorization` must be `Bearer <token>`), the rate limit when one is set (by the
   * verified identity; by client address for a `disabled` RPC and for a token that does not
   * verify, whose 401 becomes a 429 once that address's bucket is empty), the scoped capability check
   * (`access.require(<scope field>, capabilities)`, a malformed or empty scope uid is
   * INVALID_ARGUMENT naming the field), then the handler, whose context's `signal` follows
   * `record.cancellation`; all of it inside the request's span (store and blob spans descend from
   * it). Returns the handler's response. Throws only DomainErrors (anything else becomes INTERNAL)
   * and records the outcome on `record`; a call given up on (before the handler, or before it
   * answered) throws the cancellation's reason. With an auditor, a mutating RPC's context carries
   * its CallAudit, and the auditor's `finished` is awaited before the answer (ADR 0048).
   */
  invoke(
    record: CallRecord,
    entry: MethodEntry,
    request: Message,
    authorization: string | undefined,
  ): Promise<unknown>;
  /**
   * Normalises an error raised outside `invoke` (routing, decoding) and records it on `record`. A
   * call given up on ends with the cancellation's reason, whatever was thrown after that.
   */
  fail(record: CallRecord, err: unknown): DomainError;
  /**
   * Ends the request's span, writes its one log line in the schema of ADR 0041 (`msg` "request",
   * `requestId`, `traceId`, `service` "api", `rpc` or `route`, `status`, `durationMs`,
   * `identityUid` (null when anonymous), `clientAddress`, and `protocol`, `method`, `path`, `code`;
   * none for a quiet record without a cause) and counts it in the metrics by route (the RPC; a
   * plain route's path; `unrouted` for a REST request no RPC took: never the raw path of an unknown
   * URL); later calls for the same record do nothing.
   */
  finish(record: CallRecord, httpStatus: number | undefined): void;
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._~:@+=/-]{1,128}$/;
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** Creates the pipeline; it keeps no per-request state of its own. */
export function createPipeline(options: PipelineOptions): Pipeline {
  const { authenticator, accessFor, clock, logger, metrics, rateLimit, audit: auditor } = options;

  const contextFor = async (
    record: CallRecord,
    entry: MethodEntry,
    request: Message,
    authorization: string | undefined,
    audited: { principal?: Principal; audit?: CallAudit | undefined },
  ): Promise<RequestContext> => {
    const auth = entry.auth;
    const audit = audited.audit;
    if (auth.kind === "disabled") {
      rateLimit?.(record, undefined);
      return new CallContext(
        record.requestId,
        undefined,
        accessFor(undefined),
        clock,
        record.cancellation,
        audit,
      );
    }
    let principal: Principal;
    try {
      principal = await authenticator.authenticate(bearerToken(authorization));
    } catch (err) {
      // A caller without a valid token is limited by its address, so guessing tokens is limited too.
      rateLimit?.(record, undefined);
      throw err;
    }
    record.identityUid = principal.identityUid;
    audited.principal = principal;
    rateLimit?.(record, principal.identityUid);
    const access = accessFor(principal);
    if (auth.kind === "scoped") {
      const scope = requireUidp(auth.scopeField, auth.scopeOf(request));
      await access.require(scope, auth.capabilities);
    }
    return new CallContext(record.requestId, principal, access, clock, record.cancellation, audit);
  };

  const audited = (
    record: CallRecord,
    entry: MethodEntry,
    request: Message,
  ): { audit?: CallAudit | undefined } =>
    auditor !== undefined && entry.mutating
      ? {
          audit: {
            action: entry.rpcName,
            requestId: record.requestId,
            sourceAddress: record.clientAddress ?? "",
            userAgent: record.userAgent ?? "",
            target: entry.namesResource ? entry.auditTarget(request) : undefined,
            recorded: false,
          },
        }
      : {};

  const auditFinished = (
    call: { principal?: Principal; audit?: CallAudit | undefined },
    entry: MethodEntry,
    request: Message,
    error: DomainError | undefined,
  ): Promise<void> | undefined => {
    if (auditor === undefined || call.audit === undefined) return undefined;
    if (error === undefined && call.audit.recorded) return undefined;
    return auditor.finished({
      audit: call.audit,
      principal: call.principal,
      ...entry.auditTarget(request),
      error:
        error === undefined ? undefined : { error, codeName: CODE_NAMES[error.code] ?? String(error.code) },
    });
  };

  const fail = (record: CallRecord, err: unknown): DomainError => {
    const givenUp = record.cancellation.reason;
    const domainError = givenUp ?? toDomainError(err);
    record.code = domainError.code;
    if (givenUp === undefined && domainError !== err) record.cause = err;
    return domainError;
  };

  return {
    begin(init) {
      const header = Array.isArray(init.requestIdHeader) ? init.requestIdHeader[0] : init.requestIdHeader;
      // A probe is not traced (it would be most of the spans); its line still has a trace id.
      const trace = startRequestTrace(
        `${init.httpMethod} ${init.protocol}`,
        init.traceparentHeader,
        { "http.request.method": init.httpMethod, "url.path": init.path, "wharf.protocol": init.protocol },
        init.quiet !== true,
      );
      return {
        requestId: header !== undefined && SANE_REQUEST_ID.test(header) ? header : randomUUID(),
        traceId: trace.traceId,
        span: trace.span,
        clientAddress: init.clientAddress,
        startedAt: performance.now(),
        protocol: init.protocol,
        httpMethod: init.httpMethod,
        path: init.path,
        rpc: undefined,
        identityUid: undefined,
        code: undefined,
        cause: undefined,
        logged: false,
        quiet: init.quiet === true,
        userAgent: Array.isArray(init.userAgent) ? init.userAgent[0] : init.userAgent,
        cancellation: new Cancellation(),
        rateLimitHeaders: undefined,
      };
    },

    invoke(record, entry, request, authorization) {
      record.rpc = entry.rpcName;
      record.span?.rename(entry.rpcName);
      return withinSpan(record.span, async () => {
        const call = audited(record, entry, request);
        let response: unknown;
        try {
          record.cancellation.throwIfAborted();
          const ctx = await contextFor(record, entry, request, authorization, call);
          // Authentication and the access check may have waited on the store.
          record.cancellation.throwIfAborted();
          response = await entry.handler(request, ctx);
          record.cancellation.throwIfAborted();
          record.code = 0;
        } catch (err) {
          const domainError = fail(record, err);
          const writing = auditFinished(call, entry, request, domainError);
          if (writing !== undefined) await writing;
          throw domainError;
        }
        // Awaited only when there is something to write: a read costs no extra turn.
        const writing = auditFinished(call, entry, request, undefined);
        if (writing !== undefined) await writing;
        return response;
      });
    },

    fail,

    finish(record, httpStatus) {
      if (record.logged) return;
      record.logged = true;
      const code = record.code;
      const durationMs = performance.now() - record.startedAt;
      const route =
        record.rpc === undefined ? (record.protocol === "rest" ? "unrouted" : record.path) : undefined;
      const codeName = code === undefined ? undefined : CODE_NAMES[code];
      metrics?.observe(
        record.rpc ?? (route as string),
        code === undefined ? "" : (codeName ?? String(code)),
        httpStatus ?? 0,
        durationMs / 1000,
      );
      const serverFault = code === 2 || code === 13 || code === 15 || (httpStatus ?? 0) >= 500;
      if (record.span !== undefined) {
        record.span.setAttributes({
          "http.response.status_code": httpStatus,
          "rpc.grpc.status_code": code,
          "wharf.identity_uid": record.identityUid,
        });
        if (serverFault) record.span.fail(record.cause ?? new Error(codeName ?? `HTTP ${httpStatus}`));
        record.span.end();
      }
      if (record.quiet && record.cause === undefined) return;
      const line: Record<string, unknown> = {
        time: new Date(clock.now()).toISOString(),
        level: serverFault ? "error" : "info",
        msg: "request",
        requestId: record.requestId,
        traceId: record.traceId,
        service: "api",
        ...(record.rpc === undefined ? { route } : { rpc: record.rpc }),
        status: httpStatus ?? 0,
        durationMs: Math.round(durationMs * 1000) / 1000,
        identityUid: record.identityUid ?? null,
        clientAddress: record.clientAddress ?? null,
        protocol: record.protocol,
        method: record.httpMethod,
        path: record.path,
        code: codeName,
      };
      if (record.cause !== undefined) line.error = describeCause(record.cause);
      try {
        logger(line);
      } catch {
        // A broken logger must not break the response that is already on its way.
      }
    },
  };
}

/** The context of one call; its `signal` is its record's cancellation's, made on first read. */
class CallContext implements RequestContext {
  readonly #cancellation: Cancellation;

  constructor(
    readonly requestId: string,
    readonly principal: Principal | undefined,
    readonly access: Access,
    readonly clock: Clock,
    cancellation: Cancellation,
    readonly audit: CallAudit | undefined,
  ) {
    this.#cancellation = cancellation;
  }

  get signal(): AbortSignal {
    return this.#cancellation.signal;
  }
}

/** The token of an `Authorization: Bearer <token>` header; UNAUTHENTICATED when missing or malformed. */
export function bearerToken(authorization: string | undefined): string {
  // A bare "Bearer" (HTTP strips the space after it) carries no token either.
  if (authorization === undefined || /^(?:bearer)?\s*$/i.test(authorization)) {
    throw unauthenticated("missing bearer token (Authorization: Bearer <token>)");
  }
  const match = BEARER.exec(authorization);
  if (!match) throw unauthenticated('malformed Authorization header: expected "Bearer <token>"');
  return match[1]!;
}

function describeCause(cause: unknown): Record<string, unknown> {
  if (cause instanceof Error) return { name: cause.name, message: cause.message, stack: cause.stack };
  return { message: String(cause) };
}
