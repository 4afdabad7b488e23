import { Counter, Histogram, type Registry } from "prom-client";

/** Latency buckets of registry requests, in seconds: manifest reads to multi-GiB blob transfers. */
const REGISTRY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120, 600];

/** Records what the OCI registry serves; called by its request handler and listener. */
export interface RegistryMetrics {
  /**
   * Counts one request of route kind `route` (`manifest`, `blob`, `upload`, …, or `unmatched`),
   * HTTP `method` and `status`, and observes its `seconds`. A manifest PUT answered 201 also counts
   * as a push, a manifest GET answered 200 as a pull.
   */
  observe(route: string, method: string, status: number, seconds: number): void;
  /** Adds bytes received and sent on registry connections (request and response, headers included). */
  transferred(received: number, sent: number): void;
}

/**
 * Registers `wharf_registry_requests_total{route,method,status}`,
 * `wharf_registry_request_duration_seconds{route,method}`, `wharf_registry_received_bytes_total`,
 * `wharf_registry_sent_bytes_total`, `wharf_registry_pushes_total` and `wharf_registry_pulls_total`
 * on `registry`.
 */
export function createRegistryMetrics(registry: Registry): RegistryMetrics {
  const registers = [registry];
  const requests = new Counter({
    name: "wharf_registry_requests_total",
    help: "OCI registry requests by route kind, method and HTTP status.",
    labelNames: ["route", "method", "status"] as const,
    registers,
  });
  const duration = new Histogram({
    name: "wharf_registry_request_duration_seconds",
    help: "OCI registry request latency by route kind and method, until the answer is sent.",
    labelNames: ["route", "method"] as const,
    buckets: REGISTRY_BUCKETS,
    registers,
  });
  const received = new Counter({
    name: "wharf_registry_received_bytes_total",
    help: "Bytes received on OCI registry connections.",
    registers,
  });
  const sent = new Counter({
    name: "wharf_registry_sent_bytes_total",
    help: "Bytes sent on OCI registry connections.",
    registers,
  });
  const pushes = new Counter({
    name: "wharf_registry_pushes_total",
    help: "Manifests pushed (PUT answered 201).",
    registers,
  });
  const pulls = new Counter({
    name: "wharf_registry_pulls_total",
    help: "Manifests pulled (GET answered 200; HEAD not counted).",
    registers,
  });
  return {
    observe(route, method, status, seconds) {
      requests.labels(route, method, String(status)).inc();
      duration.labels(route, method).observe(seconds);
      if (route !== "manifest") return;
      if (method === "PUT" && status === 201) pushes.inc();
      else if (method === "GET" && status === 200) pulls.inc();
    },
    transferred(receivedBytes, sentBytes) {
      if (receivedBytes > 0) received.inc(receivedBytes);
      if (sentBytes > 0) sent.inc(sentBytes);
    },
  };
}
