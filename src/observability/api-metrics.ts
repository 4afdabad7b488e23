import { Counter, Histogram, type Registry } from "prom-client";

/** Latency buckets of API requests, in seconds (a GET by uid takes ~0.1 ms, a list page ~1 ms). */
const API_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Records the outcome of API requests; one call per request, from the shared pipeline. */
export interface ApiMetrics {
  /**
   * Counts one request of `route` (an RPC's `package.Service/Method`, a plain route's exact path,
   * or a fixed word for the unrouted: never a raw path) answered with gRPC code name `code` (""
   * for plain routes) and HTTP `status`, and observes its `seconds`.
   */
  observe(route: string, code: string, status: number, seconds: number): void;
}

/**
 * Registers `wharf_api_requests_total{route,code,status}` and
 * `wharf_api_request_duration_seconds{route}` on `registry`. Label children are kept per
 * (route, code, status), so a request costs a map lookup, an increment and a bucket search.
 */
export function createApiMetrics(registry: Registry): ApiMetrics {
  const requests = new Counter({
    name: "wharf_api_requests_total",
    help: "Platform API requests by RPC or route, gRPC code and HTTP status.",
    labelNames: ["route", "code", "status"] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "wharf_api_request_duration_seconds",
    help: "Platform API request latency by RPC or route, from arrival to the last byte sent.",
    labelNames: ["route"] as const,
    buckets: API_BUCKETS,
    registers: [registry],
  });
  const counters = new Map<string, { inc(): void }>();
  const histograms = new Map<string, { observe(value: number): void }>();
  return {
    observe(route, code, status, seconds) {
      const key = `${route} ${code} ${status}`;
      let counter = counters.get(key);
      if (counter === undefined) {
        counter = requests.labels(route, code, String(status));
        counters.set(key, counter);
      }
      counter.inc();
      let histogram = histograms.get(route);
      if (histogram === undefined) {
        histogram = duration.labels(route);
        histograms.set(route, histogram);
      }
      histogram.observe(seconds);
    },
  };
}
