import type { ServerResponse } from "node:http";
import { permissionDenied } from "../core/errors.js";
import {
  HEALTHZ_PATH,
  READYZ_PATH,
  type ReadinessReport,
  readinessAnswer,
} from "../observability/readiness.js";
import type { ExtraRoute } from "./create-api-handler.js";
import { methodNotAllowed, toDomainError } from "./error-mapping.js";
import { type AnyRequest, type AnyResponse, sendError } from "./http-response.js";
import type { AccessFactory, Authenticator } from "./pipeline.js";
import { authenticateBearer } from "./plain-route.js";

/** Prometheus metrics path of the API port. */
export const METRICS_PATH = "/metrics";

const DOMAIN = "wharf.dev";

/** What `/metrics` serves, and to whom. */
export interface MetricsExposition {
  /** Serve without authentication; otherwise only to the platform administrator. */
  public: boolean;
  contentType: string;
  render(): Promise<string>;
}

/**
 * The API port's operations routes: `/healthz` (200 `ok`) and `/readyz` (200, or 503 naming the
 * failing part), anonymous, GET or HEAD, quiet (not logged unless they throw); and `/metrics`
 * (Prometheus text), which needs a bearer token of the platform administrator unrestricted in
 * scope unless `metrics.public`, and answers 401/403/405 as google.rpc.Status JSON.
 */
export function createOperationsRoutes(options: {
  readiness: () => Promise<ReadinessReport>;
  metrics: MetricsExposition;
  authenticator: Authenticator;
  accessFor: AccessFactory;
}): ExtraRoute[] {
  const { metrics } = options;
  const requireAdmin = async (req: AnyRequest) => {
    const principal = await authenticateBearer(req, options.authenticator);
    const everywhere = principal.isAdmin && (await options.accessFor(principal).scopesWith([])).all;
    if (!everywhere) throw permissionDenied("metrics are for the platform administrator");
  };
  return [
    {
      path: HEALTHZ_PATH,
      quiet: true,
      handler: (req, res) => answer(req, res, 200, "ok\n", "text/plain; charset=utf-8"),
    },
    {
      path: READYZ_PATH,
      quiet: true,
      async handler(req, res) {
        if (!isRead(req, res)) return;
        const { status, body } = readinessAnswer(await options.readiness());
        answer(req, res, status, body, "application/json");
      },
    },
    {
      path: METRICS_PATH,
      async handler(req, res) {
        if (!isRead(req, res)) return;
        try {
          if (!metrics.public) await requireAdmin(req);
          answer(req, res, 200, await metrics.render(), metrics.contentType);
        } catch (err) {
          sendError(req, res, toDomainError(err), DOMAIN, { "cache-control": "no-store" });
        }
      },
    },
  ];
}

/** True for GET and HEAD; anything else is answered 405 here. */
function isRead(req: AnyRequest, res: AnyResponse): boolean {
  if (req.method === "GET" || req.method === "HEAD") return true;
  sendError(req, res, methodNotAllowed(req.method ?? "", req.url ?? "", ["GET", "HEAD"]), DOMAIN);
  return false;
}

function answer(req: AnyRequest, res: AnyResponse, status: number, body: string, type: string): void {
  if (!isRead(req, res)) return;
  (res as ServerResponse).writeHead(status, {
    "content-type": type,
    "content-length": String(Buffer.byteLength(body)),
    "cache-control": "no-store",
  });
  (res as ServerResponse).end(req.method === "HEAD" ? undefined : body);
}
