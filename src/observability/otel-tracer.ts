// The OpenTelemetry implementation of core/tracing.ts's Tracer. Loaded only when tracing is
// configured (observability/tracing.ts imports it dynamically): a server without an OTLP endpoint
// never loads the SDK.
import {
  type Context,
  context,
  type Span as OtelSpan,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from "@opentelemetry/api";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider, type SpanExporter } from "@opentelemetry/sdk-trace-node";
import { formatTraceparent, type TraceParent } from "../core/trace-context.js";
import type { Span, SpanAttributes, Tracer, SpanKind as WharfSpanKind } from "../core/tracing.js";

/** A started OpenTelemetry pipeline: the Tracer, and how to flush and stop it. */
export interface OtelTracing {
  tracer: Tracer;
  /** Exports what is buffered, then stops exporting. Never rejects (a failed export is dropped). */
  shutdown(): Promise<void>;
}

/** The OTLP protocols Wharf exports with (OTLP over HTTP). */
export const OTLP_PROTOCOLS = ["http/protobuf", "http/json"] as const;

/** An unusable tracing configuration (an unsupported protocol): start-up fails naming it. */
export class TracingConfigError extends Error {}

/**
 * The protocol the standard variables ask for: `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else
 * `OTEL_EXPORTER_OTLP_PROTOCOL`, else `http/protobuf` (the specification's default). Throws
 * TracingConfigError for `grpc` or anything else but the two HTTP protocols.
 */
export function otlpProtocolOf(env: NodeJS.ProcessEnv): (typeof OTLP_PROTOCOLS)[number] {
  const value = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || "http/protobuf")
    .trim()
    .toLowerCase();
  const known = OTLP_PROTOCOLS.find((p) => p === value);
  if (known === undefined)
    throw new TracingConfigError(
      `OTEL_EXPORTER_OTLP_PROTOCOL "${value}" is not supported: Wharf exports traces with OTLP over HTTP (${OTLP_PROTOCOLS.join(" or ")})`,
    );
  return known;
}

/**
 * Starts exporting spans as the standard OTEL_* variables say (endpoint, headers, timeout,
 * protocol, `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`, batch and sampler settings), with
 * the service name `wharf` unless they name another, and registers the SDK's AsyncLocalStorage
 * context manager, so that a span made active stays active across awaits.
 */
export async function startOtelTracing(env: NodeJS.ProcessEnv = process.env): Promise<OtelTracing> {
  const exporter = await exporterFor(otlpProtocolOf(env));
  const resource = resourceFromAttributes({ "service.name": "wharf" }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  provider.register();
  const otel = provider.getTracer("wharf");
  const tracer: Tracer = {
    start(name, options = {}) {
      const parentContext = contextOf(options.parent, options.kind);
      const span = otel.startSpan(
        name,
        { kind: KINDS[options.kind ?? "internal"], attributes: defined(options.attributes) },
        parentContext,
      );
      return wrap(span);
    },
    within(span, fn) {
      return context.with(trace.setSpan(context.active(), (span as WrappedSpan).otel), fn);
    },
    inSpan: () => trace.getActiveSpan() !== undefined,
    activeTraceparent() {
      const active = trace.getActiveSpan()?.spanContext();
      if (active === undefined || !trace.isSpanContextValid(active)) return undefined;
      return formatTraceparent({
        traceId: active.traceId,
        spanId: active.spanId,
        sampled: (active.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED,
      });
    },
  };
  return {
    tracer,
    async shutdown() {
      // A collector that refuses or cannot be reached loses the last spans; it must not fail the
      // server's stop or a command's exit.
      await provider.shutdown().catch(() => {});
    },
  };
}

async function exporterFor(protocol: (typeof OTLP_PROTOCOLS)[number]): Promise<SpanExporter> {
  // Each exporter reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, _HEADERS and _TIMEOUT itself.
  if (protocol === "http/json")
    return new (await import("@opentelemetry/exporter-trace-otlp-http")).OTLPTraceExporter();
  return new (await import("@opentelemetry/exporter-trace-otlp-proto")).OTLPTraceExporter();
}

const KINDS: Record<WharfSpanKind, SpanKind> = {
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  internal: SpanKind.INTERNAL,
};

/** The context a span starts in: under the remote parent; a server span without one starts a new trace. */
function contextOf(parent: TraceParent | undefined, kind: WharfSpanKind | undefined): Context {
  if (parent !== undefined)
    return trace.setSpanContext(ROOT_CONTEXT, {
      traceId: parent.traceId,
      spanId: parent.spanId,
      traceFlags: parent.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
      isRemote: true,
    });
  return kind === "server" ? ROOT_CONTEXT : context.active();
}

function defined(attributes: SpanAttributes | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  if (attributes === undefined) return out;
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}

interface WrappedSpan extends Span {
  readonly otel: OtelSpan;
}

function wrap(otel: OtelSpan): WrappedSpan {
  const spanContext = otel.spanContext();
  return {
    otel,
    traceId: spanContext.traceId,
    traceparent: () =>
      formatTraceparent({
        traceId: spanContext.traceId,
        spanId: spanContext.spanId,
        sampled: (spanContext.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED,
      }),
    rename: (name) => otel.updateName(name),
    setAttributes: (attributes) => otel.setAttributes(defined(attributes)),
    fail(err) {
      if (err instanceof Error) otel.recordException(err);
      otel.setStatus({
        code: SpanStatusCode.ERROR,
        message: err instanceof Error ? err.message : String(err),
      });
    },
    end: () => otel.end(),
  };
}
