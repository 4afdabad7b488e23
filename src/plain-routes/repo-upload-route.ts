import type { CallAuditor } from "../core/call-auditor.js";
import type { CallAudit, Principal } from "../core/context.js";
import { type DomainError, invalidArgument } from "../core/errors.js";
import { isUidp } from "../core/uidp.js";
import type { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import type { ExtraRoute } from "../transport/create-api-handler.js";
import { CODE_NAMES, domainForPackage, toDomainError } from "../transport/error-mapping.js";
import { type AnyRequest, sendError, sendJson } from "../transport/http-response.js";
import type { AccessFactory } from "../transport/pipeline.js";
import { authenticateBearer } from "../transport/plain-route.js";

const DOMAIN = domainForPackage("platform.registry.v1");

/** An authorized upload into one repo: who sent it, where to, and the body still to read. */
export interface RepoUpload {
  principal: Principal;
  repoUid: string;
  /** The `digest` query parameter ("" when absent). */
  digest: string;
  body: AsyncIterable<Uint8Array>;
}

/** The audit log of the upload routes (the RPC pipeline's CallAuditor), and where a request came from. */
export interface UploadAudit {
  auditor: CallAuditor;
  /** The client's address as the API's log line names it (trusted proxies applied). */
  clientAddress(req: AnyRequest): string;
}

/**
 * A `POST <prefix>{repo_uid}?digest=…` route whose body is a document as it is (not a JSON message),
 * such as a scanner report or an OpenVEX document. Before `ingest` runs, the route authenticates the
 * caller, checks `capabilities` at the repo, and refuses a declared `Content-Length` over `limit`
 * naming `bodyField`. With `audit`, each upload leaves an audit record (OK, DENIED or FAILED) before
 * the answer, as a mutating RPC does. It answers `ingest`'s JSON text with 200, or google.rpc.Status JSON; on an
 * error it drains what the client is still sending, so the client reads the answer.
 */
export function repoUploadRoute(
  deps: {
    verifier: { authenticate(token: string): Promise<Principal> };
    accessFor: AccessFactory;
    /** Audits every upload, accepted or refused, as the RPC of the same name would be (ADR 0048). */
    audit?: UploadAudit | undefined;
  },
  opts: {
    prefix: string;
    /** The RPC this route is the REST form of (`platform.registry.v1.Vulnerabilities/CreateVulnReport`): the audit action. */
    action: string;
    capabilities: readonly Capability[];
    limit: number;
    bodyField: string;
    bodyNoun: string;
    ingest(upload: RepoUpload): Promise<string>;
  },
): ExtraRoute {
  return {
    path: opts.prefix,
    prefix: true,
    method: "POST",
    async handler(req, res) {
      let principal: Principal | undefined;
      let repoUid = "";
      const audit: CallAudit | undefined = deps.audit && {
        action: opts.action,
        requestId: String(res.getHeader("x-request-id") ?? ""),
        sourceAddress: deps.audit.clientAddress(req),
        userAgent: req.headers["user-agent"] ?? "",
        recorded: false,
      };
      const audited = (error?: DomainError) =>
        audit &&
        deps.audit?.auditor.finished({
          audit,
          principal,
          resource: repoUid,
          group: isUidp(repoUid) ? repoUid : "",
          error: error && { error, codeName: CODE_NAMES[error.code] ?? String(error.code) },
        });
      try {
        const url = new URL(req.url ?? "/", "http://localhost");
        try {
          repoUid = decodeURIComponent(url.pathname.slice(opts.prefix.length));
        } catch {
          throw invalidArgument("repo_uid", "malformed percent-encoding in the URL path");
        }
        principal = await authenticateBearer(req, deps.verifier);
        if (!isUidp(repoUid)) throw invalidArgument("repo_uid", "repo_uid must be a repo uid");
        await deps.accessFor(principal).require(repoUid, [...opts.capabilities]);
        if (Number(req.headers["content-length"] ?? 0) > opts.limit) {
          throw invalidArgument(opts.bodyField, `the ${opts.bodyNoun} is larger than ${opts.limit} bytes`);
        }
        const answer = await opts.ingest({
          principal,
          repoUid,
          digest: url.searchParams.get("digest") ?? "",
          body: req as AsyncIterable<Uint8Array>,
        });
        await audited();
        sendJson(res, 200, answer, { "cache-control": "no-store" });
      } catch (err) {
        req.resume();
        const error = toDomainError(err);
        await audited(error);
        sendError(req, res, error, DOMAIN, { "cache-control": "no-store" });
      }
    },
  };
}
