import cluster from "node:cluster";
import { AggregatorRegistry, type Registry } from "prom-client";

const ASK = "wharf:metrics?";
const ANSWER = "wharf:metrics";

interface Ask {
  type: typeof ASK;
  id: number;
}
interface Answer {
  type: typeof ANSWER;
  id: number;
  text?: string;
  error?: string;
}

/**
 * In a cluster worker: offers `registry` to the primary's aggregation (prom-client's
 * AggregatorRegistry protocol) and returns how this worker renders `/metrics` for the whole host:
 * it asks the primary ({@link answerHostMetrics}), which gathers every worker's metrics, sums them
 * (counters, histograms; gauges as each declares) and adds its own. Rejects after `timeoutMs`
 * (default 6 s; the primary waits up to 5 s for its workers).
 */
export function hostMetricsFromPrimary(registry: Registry, timeoutMs = 6_000): () => Promise<string> {
  // Constructing one installs the worker's answering listener; the registries are module state.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
  let next = 0;
  const waiting = new Map<number, (answer: Answer) => void>();
  process.on("message", (message: Answer) => {
    if (message?.type === ANSWER) waiting.get(message.id)?.(message);
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error("the primary process did not answer for the metrics in time"));
      }, timeoutMs);
      waiting.set(id, (answer) => {
        waiting.delete(id);
        clearTimeout(timer);
        if (answer.text !== undefined) resolve(answer.text);
        else reject(new Error(answer.error ?? "the primary process sent no metrics"));
      });
      process.send?.({ type: ASK, id } satisfies Ask);
    });
}

/**
 * In the cluster primary: answers every worker's {@link hostMetricsFromPrimary} request with the
 * aggregate of all connected workers' metrics followed by `own` (the primary's registry, e.g. the
 * worker restarts counter). Never throws; an aggregation failure is answered as an error.
 */
export function answerHostMetrics(own: Registry): void {
  const aggregator = new AggregatorRegistry();
  cluster.on("message", (worker, message: Ask) => {
    if (message?.type !== ASK) return;
    Promise.all([aggregator.clusterMetrics(), own.metrics()]).then(
      ([workers, primary]) => send(worker, { type: ANSWER, id: message.id, text: `${workers}${primary}` }),
      (err: unknown) =>
        send(worker, { type: ANSWER, id: message.id, error: String((err as Error)?.message ?? err) }),
    );
  });
}

function send(worker: import("node:cluster").Worker, answer: Answer): void {
  if (worker.isConnected()) worker.send(answer);
}
