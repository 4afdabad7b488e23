// The tracing seam every layer may use (storage included: it imports only core/). Nothing here
// loads a tracing SDK: until the composition root installs a Tracer (only when OpenTelemetry is
// configured, see observability/tracing.ts), every helper is a direct call of the traced function.
import { newTraceId, parseTraceparent, type TraceParent } from "./trace-context.js";

/** Attributes of a span (undefined values are left out). */
export type SpanAttributes = Readonly<Record<string, string | number | boolean | undefined>>;

/** What a span stands for: a request served, a call made to another service, or work inside. */
export type SpanKind = "server" | "client" | "internal";

/** One span in progress. Every method is safe to call after `end` (it does nothing then). */
export interface Span {
  /** The trace it belongs to (32 lowercase hex digits). */
  readonly traceId: string;
  /** Its `traceparent` header value, to hand to a callee so that its spans descend from this one. */
  traceparent(): string;
  /** Renames it (a request's span, once it is routed). */
  rename(name: string): void;
  setAttributes(attributes: SpanAttributes): void;
  /** Marks it failed by `err` (recorded as an exception). */
  fail(err: unknown): void;
  end(): void;
}

/** A tracing implementation (the OpenTelemetry one is observability/otel-tracer.ts). */
export interface Tracer {
  /**
   * Starts a span: a child of `parent` when given (a remote parent: a request's `traceparent`, an
   * event's recorded one), else of the active span, else a new trace's root.
   */
  start(
    name: string,
    options?: { kind?: SpanKind; parent?: TraceParent | undefined; attributes?: SpanAttributes },
  ): Span;
  /** Runs `fn` with `span` active: spans started in it, synchronously or after awaits, are its children. */
  within<T>(span: Span, fn: () => T): T;
  /** The `traceparent` of the active span; undefined outside any span. */
  activeTraceparent(): string | undefined;
  /** Whether a span is active here. */
  inSpan(): boolean;
}

let installed: Tracer | undefined;

/** Installs the process's tracer (undefined uninstalls it: every helper turns into a direct call). */
export function installTracer(tracer: Tracer | undefined): void {
  installed = tracer;
}

/** The installed tracer; undefined when tracing is off. */
export function activeTracer(): Tracer | undefined {
  return installed;
}

/**
 * Runs `fn` inside a span named `name`, a child of the active span, that ends when its promise
 * settles, failed when it rejects. Outside any span (background work: polls, heartbeats, probes)
 * and with tracing off it is `fn()` and nothing else: work is traced as part of what caused it.
 */
export function traced<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T> {
  const tracer = installed;
  if (tracer === undefined || !tracer.inSpan()) return fn();
  return inSpan(tracer, name, attributes, fn);
}

/** {@link traced}, starting a new trace when no span is active (a GC run). */
export function tracedRoot<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T> {
  const tracer = installed;
  return tracer === undefined ? fn() : inSpan(tracer, name, attributes, fn);
}

function inSpan<T>(
  tracer: Tracer,
  name: string,
  attributes: SpanAttributes,
  fn: () => Promise<T>,
): Promise<T> {
  const span = tracer.start(name, { attributes });
  let result: Promise<T>;
  try {
    result = tracer.within(span, fn);
  } catch (err) {
    span.fail(err);
    span.end();
    throw err;
  }
  return result.then(
    (value) => {
      span.end();
      return value;
    },
    (err: unknown) => {
      span.fail(err);
      span.end();
      throw err;
    },
  );
}

/** Runs `fn` with `span` active; without a span (tracing off) it is `fn()`. */
export function withinSpan<T>(span: Span | undefined, fn: () => T): T {
  return span === undefined || installed === undefined ? fn() : installed.within(span, fn);
}

/** The `traceparent` of the active span (to record with a change, or send on); undefined when off. */
export function currentTraceparent(): string | undefined {
  return installed?.activeTraceparent();
}

/** The trace of one request served: its id (always) and its span (only with tracing on). */
export interface RequestTrace {
  traceId: string;
  span: Span | undefined;
}

/**
 * Starts the trace of a request that arrived with `traceparentHeader`: with tracing on (and
 * `spanned`, default true), a server span that continues the incoming trace (or starts one);
 * otherwise just the trace id the logs carry, the incoming one's, or a new random one.
 */
export function startRequestTrace(
  name: string,
  traceparentHeader: string | readonly string[] | undefined,
  attributes: SpanAttributes,
  spanned = true,
): RequestTrace {
  const parent = traceparentHeader === undefined ? undefined : parseTraceparent(traceparentHeader);
  const tracer = installed;
  if (tracer === undefined || !spanned) return { traceId: parent?.traceId ?? newTraceId(), span: undefined };
  const span = tracer.start(name, { kind: "server", parent, attributes });
  return { traceId: span.traceId, span };
}

/**
 * Runs `fn` (an outgoing call) in a client span that continues `parentTraceparent` (a trace
 * recorded earlier, e.g. with an outbox event), handing `fn` the `traceparent` to send: the span's,
 * or with tracing off `parentTraceparent` itself, so the callee still joins the recorded trace.
 */
export async function tracedCall<T>(
  name: string,
  parentTraceparent: string | undefined,
  attributes: SpanAttributes,
  fn: (traceparent: string | undefined) => Promise<T>,
  failed?: (result: T) => string | undefined,
): Promise<T> {
  const tracer = installed;
  if (tracer === undefined) return fn(parentTraceparent);
  const parent = parentTraceparent === undefined ? undefined : parseTraceparent(parentTraceparent);
  const span = tracer.start(name, { kind: "client", parent, attributes });
  try {
    const result = await tracer.within(span, () => fn(span.traceparent()));
    const why = failed?.(result);
    if (why !== undefined) span.fail(new Error(why));
    return result;
  } catch (err) {
    span.fail(err);
    throw err;
  } finally {
    span.end();
  }
}
