import { createJsonEncoders } from "../codec/json-encoder.js";
import { invalidArgument } from "../core/errors.js";
import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import { VexDocumentSchema } from "../gen/platform/registry/v1/vex_pb.js";
import type { ExtraRoute } from "../transport/create-api-handler.js";
import { ingestVexDocument } from "../vulnreports/vex/ingest-vex.js";
import { DEFAULT_VEX_MAX_BYTES } from "../vulnreports/vex/openvex.js";
import { vexDocumentMessage } from "../vulnreports/vex/vex-mapping.js";
import { repoUploadRoute } from "./repo-upload-route.js";
import type { VulnReportRoutesDeps } from "./vuln-report-routes.js";

/** The REST path prefix of CreateVexDocument: `POST /registry/v1/vex/{repo_uid}?digest=…`. */
export const VEX_UPLOAD_PREFIX = "/registry/v1/vex/";

const encode = createJsonEncoders(undefined)(VexDocumentSchema);

/** Reads the whole body, refusing it past `limit` bytes. */
async function readBody(body: AsyncIterable<Uint8Array>, limit: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) throw invalidArgument("document", `the document is larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * The document of an upload body: the body itself (the OpenVEX JSON), or, when the body is a JSON
 * string, the bytes it holds in base64 (what `body: "document"` means for a bytes field, so
 * generic REST clients work too).
 */
function documentBytes(body: Buffer): Buffer {
  const text = body.toString("utf8").trimStart();
  if (!text.startsWith('"')) return body;
  try {
    return Buffer.from(String(JSON.parse(text)), "base64");
  } catch {
    throw invalidArgument("document", "the body is a JSON string that does not end");
  }
}

/**
 * The REST form of CreateVexDocument, served as a plain route rather than by the transcoder (ADR
 * 0059): the body is the OpenVEX JSON as it is (up to 4 MiB), like CreateVulnReport's. Same
 * capability as the RPC (CAP_VULN_REPORT_CREATE), checked at the repo; answers the stored
 * VexDocument JSON, or google.rpc.Status JSON.
 */
export function createVexRoutes(deps: VulnReportRoutesDeps): ExtraRoute[] {
  const limit = DEFAULT_VEX_MAX_BYTES;
  return [
    repoUploadRoute(deps, {
      prefix: VEX_UPLOAD_PREFIX,
      action: "platform.registry.v1.Vex/CreateVexDocument",
      capabilities: [Capability.CAP_VULN_REPORT_CREATE],
      limit,
      bodyField: "document",
      bodyNoun: "document",
      async ingest(upload) {
        const row = await ingestVexDocument(
          deps,
          { principal: upload.principal, clock: deps.clock },
          {
            repoUid: upload.repoUid,
            digest: upload.digest,
            bytes: documentBytes(await readBody(upload.body, limit)),
            source: "upload",
          },
        );
        return JSON.stringify(encode(vexDocumentMessage(row)));
      },
    }),
  ];
}
