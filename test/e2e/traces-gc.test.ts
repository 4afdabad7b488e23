import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../support/otlp-receiver.js";
import { runWharf } from "../support/wharf-process.js";

// `wharf gc` with the OpenTelemetry variables set (ADR 0042): one trace per run, a span per phase,
// exported before the command exits. Real CLI processes, a real OTLP/HTTP receiver.

const PHASES = ["uploads", "stray uploads", "manifests", "links", "blobs", "stray blobs"];

describe("garbage collection traces", () => {
  let otlp: OtlpReceiver;
  let dataDir: string;
  before(async () => {
    otlp = await startOtlpReceiver();
    dataDir = await mkdtemp(join(tmpdir(), "wharf-traces-gc-"));
  });
  after(async () => {
    await otlp?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const gc = (env: Record<string, string>) =>
    runWharf(["gc", "--grace", "1s"], {
      ...process.env,
      WHARF_DATA_DIR: dataDir,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      ...env,
    });

  it("a run is a gc span with one child span per phase, its transactions inside them", async () => {
    const run = await gc({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_SERVICE_NAME: "wharf-gc-test" });
    assert.equal(run.code, 0, run.stderr);
    // Exported before the command exited: no waiting.
    const roots = otlp.spans.filter((s) => s.name === "gc");
    assert.equal(roots.length, 1, otlp.spans.map((s) => s.name).join(", "));
    const root = roots[0] as ReceivedSpan;
    assert.equal(root.parentSpanId, "");
    assert.equal(root.serviceName, "wharf-gc-test", "OTEL_SERVICE_NAME names the resource");
    const phases = otlp.spans.filter((s) => s.parentSpanId === root.spanId && s.name.startsWith("gc "));
    assert.deepEqual(phases.map((s) => s.attributes["wharf.gc.phase"]).sort(), [...PHASES].sort());
    const links = phases.find((s) => s.name === "gc links") as ReceivedSpan;
    assert.ok(
      otlp.spans.some((s) => s.name === "db.transaction" && s.parentSpanId === links.spanId),
      "the links phase's transaction is its child",
    );
    const strayBlobs = phases.find((s) => s.name === "gc stray blobs") as ReceivedSpan;
    assert.ok(otlp.spans.some((s) => s.name === "blob.list" && s.parentSpanId === strayBlobs.spanId));
    assert.ok(
      otlp.spans.every((s) => s.traceId === root.traceId),
      "nothing outside the run's trace",
    );
  });

  it("the default protocol is http/protobuf; grpc is refused at start-up, naming the variable", async () => {
    const before = otlp.refused.length;
    const run = await gc({ OTEL_EXPORTER_OTLP_PROTOCOL: "" });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(otlp.refused.slice(before), ["POST /v1/traces application/x-protobuf"]);
    const grpc = await gc({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" });
    assert.notEqual(grpc.code, 0);
    assert.match(grpc.stderr, /OTEL_EXPORTER_OTLP_PROTOCOL "grpc" is not supported/);
  });
});
