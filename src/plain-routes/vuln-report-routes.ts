import { createJsonEncoders } from "../codec/json-encoder.js";
import type { Clock } from "../core/clock.js";
import type { Principal } from "../core/context.js";
import { invalidArgument } from "../core/errors.js";
import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import { ImageVulnReportSchema } from "../gen/platform/registry/v1/vulnerabilities_pb.js";
import type { ExtraRoute } from "../transport/create-api-handler.js";
import { domainForPackage } from "../transport/error-mapping.js";
import type { AccessFactory } from "../transport/pipeline.js";
import type { JsonSource } from "../vulnreports/formats/json-paths.js";
import { ingestVulnReport } from "../vulnreports/ingest.js";
import { imageVulnReportMessage } from "../vulnreports/report-mapping.js";
import { DEFAULT_VULN_REPORT_MAX_BYTES, type VulnReportServiceDeps } from "../vulnreports/service-deps.js";
import { repoUploadRoute, type UploadAudit } from "./repo-upload-route.js";

/** The REST path prefix of CreateVulnReport: `POST /registry/v1/vuln_reports/{repo_uid}?digest=…`. */
export const VULN_REPORT_UPLOAD_PREFIX = "/registry/v1/vuln_reports/";

const _DOMAIN = domainForPackage("platform.registry.v1");
const encode = createJsonEncoders(undefined)(ImageVulnReportSchema);

/**
 * The report bytes of an upload body: the body itself (the scanner's JSON), or, when the body is a
 * JSON string, the bytes it holds in base64 (what the google.api.http rule `body: "raw_report"`
 * means for a bytes field, so generic REST clients of CreateVulnReport work too; such a body is
 * read whole, up to `limit`).
 */
async function reportBody(body: AsyncIterable<Uint8Array>, limit: number): Promise<JsonSource> {
  const iterator = body[Symbol.asyncIterator]();
  const head: Uint8Array[] = [];
  let first: number | undefined;
  while (first === undefined) {
    const next = await iterator.next();
    if (next.done) break;
    head.push(next.value);
    first = next.value.find((b) => b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09);
  }
  const rest: AsyncIterable<Uint8Array> = { [Symbol.asyncIterator]: () => iterator };
  if (first !== 0x22 /* " */) {
    return (async function* () {
      yield* head;
      yield* rest;
    })();
  }
  const chunks = [...head];
  let size = chunks.reduce((n, c) => n + c.length, 0);
  for await (const chunk of rest) {
    size += chunk.length;
    if (size > limit) throw invalidArgument("raw_report", `the report is larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  let text: unknown;
  try {
    text = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw invalidArgument("raw_report", "the body is a JSON string that does not end");
  }
  return Buffer.from(String(text), "base64");
}

/** What the upload route is built from. */
export interface VulnReportRoutesDeps extends VulnReportServiceDeps {
  verifier: { authenticate(token: string): Promise<Principal> };
  accessFor: AccessFactory;
  clock: Clock;
  /** Audits each upload (ADR 0048); none: no records. */
  audit?: UploadAudit | undefined;
}

/**
 * The REST form of CreateVulnReport, served as a plain route rather than by the transcoder (ADR
 * 0024): the body is the scanner's JSON as it is, not a base64 string inside a JSON message, and it
 * is streamed through the parser into blob storage, so its limit (`vulnReportMaxBytes`, 256 MiB by
 * default) is far above the API's 4 MiB message limit. Same capabilities as the RPC, checked at the
 * repo; answers the created ImageVulnReport JSON (its summary: no vulnerabilities, their count), or
 * google.rpc.Status JSON.
 */
export function createVulnReportRoutes(deps: VulnReportRoutesDeps): ExtraRoute[] {
  const limit = deps.vulnReportMaxBytes ?? DEFAULT_VULN_REPORT_MAX_BYTES;
  return [
    repoUploadRoute(deps, {
      prefix: VULN_REPORT_UPLOAD_PREFIX,
      action: "platform.registry.v1.Vulnerabilities/CreateVulnReport",
      capabilities: [Capability.CAP_VULN_REPORT_CREATE, Capability.CAP_VULN_CREATE],
      limit,
      bodyField: "raw_report",
      bodyNoun: "report",
      async ingest(upload) {
        const { row, matches, verdicts } = await ingestVulnReport(
          deps,
          { principal: upload.principal, clock: deps.clock },
          { repoUid: upload.repoUid, digest: upload.digest, source: await reportBody(upload.body, limit) },
        );
        return JSON.stringify(encode(imageVulnReportMessage(row, matches, "summary", verdicts)));
      },
    }),
  ];
}
