// Turns tracing on when the standard OpenTelemetry variables ask for it, loading the SDK then and
// only then (observability/otel-tracer.ts), and installs it as core/tracing.ts's tracer.
import { installTracer } from "../core/tracing.js";

/**
 * Whether the environment asks for traces: an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, and neither `OTEL_SDK_DISABLED=true` nor
 * `OTEL_TRACES_EXPORTER=none` turns the SDK off.
 */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  const exporters = env.OTEL_TRACES_EXPORTER?.split(",").map((e) => e.trim().toLowerCase());
  if (exporters?.includes("none")) return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** A hold on the process's tracing; `release` it when the holder stops. */
export interface TracingHold {
  /** Whether spans are exported. */
  readonly on: boolean;
  /** Lets go; the last holder's release exports what is buffered and uninstalls the tracer. */
  release(): Promise<void>;
}

let started: Promise<{ shutdown(): Promise<void> }> | undefined;
let holders = 0;

const OFF: TracingHold = { on: false, release: async () => {} };

/**
 * Starts tracing for this process (or thread) when {@link tracingRequested}, once however many
 * servers it runs; each caller holds it until it releases. Resolves OFF without loading anything
 * otherwise. Rejects (TracingConfigError) when the variables ask for what Wharf cannot do.
 */
export async function holdTracing(env: NodeJS.ProcessEnv = process.env): Promise<TracingHold> {
  if (!tracingRequested(env)) return OFF;
  holders++;
  started ??= import("./otel-tracer.js").then(async ({ startOtelTracing }) => {
    const otel = await startOtelTracing(env);
    installTracer(otel.tracer);
    return otel;
  });
  try {
    await started;
  } catch (err) {
    holders--;
    started = undefined;
    throw err;
  }
  let released = false;
  return {
    on: true,
    async release() {
      if (released) return;
      released = true;
      if (--holders > 0 || started === undefined) return;
      const otel = await started;
      started = undefined;
      installTracer(undefined);
      await otel.shutdown();
    },
  };
}
