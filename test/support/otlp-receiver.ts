import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

/** One span as an OTLP/HTTP JSON export carried it (ids as lowercase hex). */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  /** The `service.name` of the exporting resource. */
  serviceName: string | undefined;
}

/** A real OTLP/HTTP trace receiver (JSON protocol) on loopback, keeping every span it gets. */
export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the value of OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Requests that were not a JSON trace export (content type, path), with why. */
  refused: string[];
  /** Resolves once `predicate` holds for the spans so far; rejects after `timeoutMs` (20 s). */
  waitFor(
    predicate: (spans: ReceivedSpan[]) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

interface JsonKeyValue {
  key: string;
  value: Record<string, unknown>;
}

/** An OTLP id: hex as the JSON protocol sends it (base64, as protobuf-JSON would, converted). */
function hexId(value: unknown): string {
  if (typeof value !== "string" || value === "") return "";
  return /^[0-9a-f]+$/i.test(value) ? value.toLowerCase() : Buffer.from(value, "base64").toString("hex");
}

function attributeValue(value: Record<string, unknown>): unknown {
  if ("stringValue" in value) return value.stringValue;
  if ("intValue" in value) return Number(value.intValue);
  if ("doubleValue" in value) return value.doubleValue;
  if ("boolValue" in value) return value.boolValue;
  return value;
}

function attributesOf(list: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of (list as JsonKeyValue[] | undefined) ?? []) out[kv.key] = attributeValue(kv.value);
  return out;
}

/** Starts the receiver on 127.0.0.1 with a free port; it answers each export 200 `{}`. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const refused: string[] = [];
  const waiters = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body = Buffer.concat(chunks);
      if (req.headers["content-encoding"] === "gzip") body = gunzipSync(body);
      if (req.url !== "/v1/traces" || !String(req.headers["content-type"]).startsWith("application/json")) {
        refused.push(`${req.method} ${req.url} ${req.headers["content-type"]}`);
        res.writeHead(415).end();
        return;
      }
      const request = JSON.parse(body.toString("utf8")) as {
        resourceSpans?: {
          resource?: { attributes?: unknown };
          scopeSpans?: { spans?: Record<string, unknown>[] }[];
        }[];
      };
      for (const resourceSpans of request.resourceSpans ?? []) {
        const serviceName = attributesOf(resourceSpans.resource?.attributes)["service.name"] as
          | string
          | undefined;
        for (const scope of resourceSpans.scopeSpans ?? [])
          for (const span of scope.spans ?? [])
            spans.push({
              traceId: hexId(span.traceId),
              spanId: hexId(span.spanId),
              parentSpanId: hexId(span.parentSpanId),
              name: String(span.name),
              kind: Number(span.kind ?? 0),
              attributes: attributesOf(span.attributes),
              statusCode: Number((span.status as { code?: number } | undefined)?.code ?? 0),
              serviceName,
            });
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    refused,
    waitFor(predicate, what, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(spans)) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(spans);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(`timed out waiting for spans: ${what} (got ${spans.map((s) => s.name).join(", ")})`),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
