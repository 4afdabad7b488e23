import type { Principal } from "../core/context.js";
import { invalidArgument } from "../core/errors.js";
import { isUidp } from "../core/uidp.js";
import type { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import type { ExtraRoute } from "../transport/create-api-handler.js";
import { domainForPackage, toDomainError } from "../transport/error-mapping.js";
import { sendError, sendJson } from "../transport/http-response.js";
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

/**
 * A `POST <prefix>{repo_uid}?digest=…` route whose body is a document as it is (not a JSON message),
 * such as a scanner report or an OpenVEX document. Before `ingest` runs, the route authenticates the
 * caller, checks `capabilities` at the repo, and refuses a declared `Content-Length` over `limit`
 * naming `bodyField`. It answers `ingest`'s JSON text with 200, or google.rpc.Status JSON; on an
 * error it drains what the client is still sending, so the client reads the answer.
 */
export function repoUploadRoute(
  deps: {
    verifier: { authenticate(token: string): Promise<Principal> };
    accessFor: AccessFactory;
  },
  opts: {
    prefix: string;
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
      try {
        const url = new URL(req.url ?? "/", "http://localhost");
        let repoUid: string;
        try {
          repoUid = decodeURIComponent(url.pathname.slice(opts.prefix.length));
        } catch {
          throw invalidArgument("repo_uid", "malformed percent-encoding in the URL path");
        }
        const principal = await authenticateBearer(req, deps.verifier);
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
        sendJson(res, 200, answer, { "cache-control": "no-store" });
      } catch (err) {
        req.resume();
        sendError(req, res, toDomainError(err), DOMAIN, { "cache-control": "no-store" });
      }
    },
  };
}
