import type { RegistryAuditAction } from "../audit/registry-audit.js";
import type { Principal } from "../core/context.js";
import { referenceName } from "./manifest-handlers.js";
import type { OciError } from "./oci-errors.js";
import { auditFacts, type Exchange, type RegistryDeps } from "./registry-request.js";
import type { RegistryRoute } from "./routes.js";

/**
 * Tells the audit log of a refused registry request (ADR 0048): every 403 and 429, and a 401 when
 * the client presented credentials (a 401 to a request without any is the protocol's challenge,
 * answered to every first request of a client, not a refusal). Queued, never awaited.
 */
export function auditRefusal(
  deps: RegistryDeps,
  ex: Exchange,
  route: RegistryRoute | undefined,
  error: OciError,
  principal: Principal | undefined,
): void {
  const audit = deps.audit;
  if (audit === undefined) return;
  const refused =
    error.status === 403 ||
    error.status === 429 ||
    (error.status === 401 && ex.req.headers.authorization !== undefined);
  if (!refused) return;
  const name = route !== undefined && "name" in route ? route.name : undefined;
  audit.refused(
    actionOf(route, ex.req.method ?? "GET"),
    auditFacts(ex, principal),
    { resource: resourceOf(route, ex), repository: name },
    error.auditReason === undefined ? error.code : `${error.code}: ${error.auditReason}`,
  );
}

function actionOf(route: RegistryRoute | undefined, method: string): RegistryAuditAction {
  if (route?.kind === "token") return "registry.token";
  if (method === "DELETE") return "registry.delete";
  return method === "GET" || method === "HEAD" ? "registry.pull" : "registry.push";
}

function resourceOf(route: RegistryRoute | undefined, ex: Exchange): string {
  switch (route?.kind) {
    case "manifest":
      return referenceName(route.name, route.reference);
    case "blob":
    case "referrers":
      return `${route.name}@${route.digest}`;
    case "history":
      return `${route.name}:${route.tag}`;
    case "uploads":
    case "upload":
    case "tags":
      return route.name;
    default:
      return ex.url.pathname.slice(0, 300);
  }
}
