import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { forEachEngine } from "../support/databases.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../support/otlp-receiver.js";
import { fetchRegistryClient, pushImage } from "../support/registry-push.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import {
  adminTokenOf,
  createVia,
  serveProcess,
  stopProcess,
  type WharfProcess,
} from "../support/wharf-process.js";

// OpenTelemetry traces (ADR 0042): real `wharf serve` processes exporting OTLP/HTTP (JSON protocol)
// to a real receiver in this process, a real webhook sink, and a module recorder preloaded into
// the server that proves what a server without an exporter never loads.

const RECORDER = new URL("../support/module-recorder.mjs", import.meta.url).pathname;
const SERVER = 2;
const CLIENT = 3;

const hex = (bytes: number) => randomBytes(bytes).toString("hex");

/** Env that preloads the module recorder, writing to `file`. */
function recordModules(file: string): Record<string, string> {
  return {
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${RECORDER}`.trim(),
    WHARF_TEST_MODULE_LOG: file,
  };
}

/** The request lines the server printed on stdout. */
function requestLines(server: WharfProcess): Record<string, unknown>[] {
  return server
    .stdout()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === "request");
}

/** The request line that `predicate` picks, once the server printed it (it logs after answering). */
async function requestLine(
  server: WharfProcess,
  predicate: (line: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const line = requestLines(server).find(predicate);
    if (line !== undefined) return line;
    assert.ok(Date.now() < deadline, "the request line was printed within 10 s");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** `span`'s ancestors within `spans`, nearest first (stops where a parent is not among them). */
function ancestorsOf(span: ReceivedSpan, spans: readonly ReceivedSpan[]): ReceivedSpan[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const out: ReceivedSpan[] = [];
  for (let at = byId.get(span.parentSpanId); at !== undefined; at = byId.get(at.parentSpanId)) out.push(at);
  return out;
}

// Both engines: a store transaction is a span on each (its `db.system.name` says which).
forEachEngine("OpenTelemetry traces", (db) => {
  let otlp: OtlpReceiver;
  let sink: WebhookReceiver;
  let dataDir: string;
  let server: WharfProcess;
  let apiToken: string;
  let registryToken: string;
  let org: string;

  before(async () => {
    otlp = await startOtlpReceiver();
    sink = await startWebhookReceiver();
    dataDir = await mkdtemp(join(tmpdir(), "wharf-traces-"));
    const { databaseUrl } = (await db.freshOptions()) as { databaseUrl?: string };
    server = await serveProcess(dataDir, {
      ...(databaseUrl ? { WHARF_DATABASE_URL: databaseUrl } : {}),
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_BSP_SCHEDULE_DELAY: "100",
      WHARF_EVENTS_ALLOW_LOOPBACK: "true",
      ...recordModules(join(dataDir, "modules.log")),
    });
    const env: Record<string, string> = databaseUrl ? { WHARF_DATABASE_URL: databaseUrl } : {};
    apiToken = await adminTokenOf(dataDir, server.apiUrl, { env });
    registryToken = await adminTokenOf(dataDir, server.apiUrl, { audience: server.registryUrl, env });
    org = await createVia(server.apiUrl, apiToken, "/iam/v2/groups", { name: "acme" });
    await createVia(server.apiUrl, apiToken, `/events/v2/subscriptions/${org}`, { sink: sink.url("/hook") });
  });
  after(async () => {
    if (server) await stopProcess(server);
    await sink?.close();
    await otlp?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("a push is one connected tree: each request's server span, its transactions and blob operations", async () => {
    const traceId = hex(16);
    const caller = hex(8);
    const client = fetchRegistryClient(server.registryUrl, {
      headers: { traceparent: `00-${traceId}-${caller}-01` },
    });
    await pushImage(client, "acme/app", "v1", registryToken, "traced push");
    const spans = await otlp.waitFor(
      (all) => all.some((s) => s.traceId === traceId && s.name === "PUT registry manifest"),
      "the manifest PUT's server span",
    );
    assert.deepEqual(otlp.refused, []);
    const trace = spans.filter((s) => s.traceId === traceId);
    const ids = new Set(trace.map((s) => s.spanId));
    for (const span of trace) {
      assert.ok(
        span.parentSpanId === caller || ids.has(span.parentSpanId),
        `${span.name}: its parent ${span.parentSpanId} is in the trace`,
      );
      assert.equal(span.serviceName, "wharf");
    }
    const servers = trace.filter((s) => s.kind === SERVER);
    assert.ok(
      servers.length >= 3,
      `the uploads and the manifest PUT: ${servers.map((s) => s.name).join(", ")}`,
    );
    for (const span of servers)
      assert.equal(span.parentSpanId, caller, `${span.name} continues the caller's span`);
    const put = servers.find((s) => s.name === "PUT registry manifest") as ReceivedSpan;
    assert.equal(put.attributes["http.response.status_code"], 201);
    const transactions = trace.filter((s) => s.name === "db.transaction");
    assert.ok(
      transactions.some((t) => ancestorsOf(t, trace).includes(put)),
      "the manifest's transaction is inside the PUT's span",
    );
    assert.equal(transactions[0]?.attributes["db.system.name"], db.engine);
    const blobOps = trace.filter((s) => s.name.startsWith("blob."));
    assert.ok(blobOps.length > 0, "blob operations are spans");
    for (const op of blobOps)
      assert.equal(ancestorsOf(op, trace).at(-1)?.kind, SERVER, `${op.name} descends from a request`);
    assert.ok(blobOps.every((op) => op.attributes["wharf.blob.driver"] === "filesystem"));
    // The log lines of those requests name the same trace.
    const put201 = await requestLine(server, (l) => l.traceId === traceId && l.route === "manifest");
    assert.equal(put201.status, 201);
    const lines = requestLines(server).filter((l) => l.service === "registry" && l.traceId === traceId);
    assert.equal(lines.length, servers.length, "one request line per server span, with its trace id");
  });

  it("a webhook delivery sends a traceparent continuing the trace of the push that caused it", async () => {
    const traceId = hex(16);
    const client = fetchRegistryClient(server.registryUrl, {
      headers: { traceparent: `00-${traceId}-${hex(8)}-01` },
    });
    const image = await pushImage(client, "acme/app", "v2", registryToken, "pushed for a webhook");
    const ofThisPush = (d: { headers: Record<string, unknown> }) =>
      d.headers["ce-type"] === "dev.wharf.registry.push.v1" && d.headers["ce-digest"] === image.digest;
    const delivery = (await sink.waitFor((got) => got.some(ofThisPush), 20_000)).find(ofThisPush);
    const header = String(delivery?.headers.traceparent);
    const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(header);
    assert.ok(match, `a W3C traceparent header: ${header}`);
    assert.equal(match[1], traceId, "the push's trace");
    assert.equal(
      delivery?.headers["ce-traceparent"],
      undefined,
      "sent as the W3C header, not as ce-traceparent",
    );
    const deliverOf = (all: ReceivedSpan[]) => all.find((s) => s.spanId === match[2]);
    const spans = await otlp.waitFor((all) => {
      const deliver = deliverOf(all);
      return deliver !== undefined && all.some((s) => s.spanId === deliver.parentSpanId);
    }, "the delivery's span (exported by the dispatcher thread) and its parent");
    const deliver = deliverOf(spans) as ReceivedSpan;
    assert.equal(deliver.name, "webhook.deliver");
    assert.equal(deliver.kind, CLIENT);
    assert.equal(deliver.traceId, traceId);
    assert.equal(deliver.attributes["cloudevents.event_type"], "dev.wharf.registry.push.v1");
    const trace = spans.filter((s) => s.traceId === traceId);
    const recordedIn = trace.find((s) => s.spanId === deliver.parentSpanId);
    assert.equal(
      recordedIn?.name,
      "db.transaction",
      "it descends from the transaction that recorded the event",
    );
    assert.equal(ancestorsOf(recordedIn as ReceivedSpan, trace).at(-1)?.name, "PUT registry manifest");
  });

  it("an API request honours an incoming traceparent; its log line names the trace", async () => {
    const traceId = hex(16);
    const caller = hex(8);
    const res = await fetch(`${server.apiUrl}/iam/v2/groups/${org}`, {
      headers: { authorization: `Bearer ${apiToken}`, traceparent: `00-${traceId}-${caller}-01` },
    });
    assert.equal(res.status, 200);
    const spans = await otlp.waitFor(
      (all) => all.some((s) => s.traceId === traceId && s.kind === SERVER),
      "the API request's server span",
    );
    const span = spans.find((s) => s.traceId === traceId && s.kind === SERVER) as ReceivedSpan;
    assert.equal(span.parentSpanId, caller);
    assert.match(span.name, /GroupsService\/GetGroup$/);
    assert.equal(span.attributes["http.response.status_code"], 200);
    const line = await requestLine(server, (l) => l.traceId === traceId);
    assert.equal(line?.service, "api");
    assert.equal(line?.rpc, span.name);
  });

  it("an invalid traceparent starts a new trace", async () => {
    const res = await fetch(`${server.apiUrl}/iam/v2/groups/${org}`, {
      headers: { authorization: `Bearer ${apiToken}`, traceparent: `00-${"0".repeat(32)}-${hex(8)}-01` },
    });
    assert.equal(res.status, 200);
    const requestId = res.headers.get("x-request-id");
    const line = await requestLine(server, (l) => l.requestId === requestId);
    assert.match(String(line?.traceId), /^[0-9a-f]{32}$/);
    assert.notEqual(line?.traceId, "0".repeat(32));
    await otlp.waitFor(
      (all) => all.some((s) => s.traceId === line?.traceId && s.parentSpanId === ""),
      "a root span",
    );
  });

  it("the server loaded the tracing SDK (the control of the next test)", async () => {
    const modules = await readFile(join(dataDir, "modules.log"), "utf8");
    assert.match(modules, /@opentelemetry\/sdk-trace-node/);
    assert.match(modules, /@opentelemetry\/exporter-trace-otlp-http/);
  });
});

describe("tracing off", () => {
  let dataDir: string;
  let server: WharfProcess | undefined;
  after(async () => {
    if (server) await stopProcess(server);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("without an exporter no tracing SDK loads, and log lines still carry the incoming trace id", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "wharf-traces-off-"));
    const modulesLog = join(dataDir, "modules.log");
    server = await serveProcess(dataDir, {
      OTEL_EXPORTER_OTLP_ENDPOINT: "",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "",
      ...recordModules(modulesLog),
    });
    const traceId = hex(16);
    const res = await fetch(`${server.registryUrl}/v2/`, {
      headers: { traceparent: `00-${traceId}-${hex(8)}-01` },
    });
    assert.equal(res.status, 401);
    const fresh = await fetch(`${server.registryUrl}/v2/`);
    const running = server;
    const lineOf = (answer: Response) =>
      requestLine(running, (l) => l.requestId === answer.headers.get("x-request-id"));
    assert.equal((await lineOf(res)).traceId, traceId);
    const newTrace = (await lineOf(fresh)).traceId;
    assert.match(String(newTrace), /^[0-9a-f]{32}$/, "a new trace id without a traceparent");
    assert.notEqual(newTrace, traceId);
    const modules = await readFile(modulesLog, "utf8");
    assert.match(modules, /\/dist\/server\.js/, "the recorder saw the server's modules");
    assert.doesNotMatch(modules, /@opentelemetry\/(sdk-|exporter-|resources)/);
    assert.doesNotMatch(modules, /otel-tracer\.js/);
  });
});
