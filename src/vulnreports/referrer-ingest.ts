import type { Clock } from "../core/clock.js";
import type { Principal } from "../core/context.js";
import { parseDigest } from "../registry/digest.js";
import type { Descriptor, ParsedManifest } from "../registry/manifest-parser.js";
import { blobKey } from "../storage/blobs/blob-layout.js";
import { COSIGN_VULN_PREDICATE } from "./formats/parse-report.js";
import { ingestVulnReport } from "./ingest.js";
import type { VulnReportServiceDeps } from "./service-deps.js";
import { ingestVexDocument } from "./vex/ingest-vex.js";
import { DEFAULT_VEX_MAX_BYTES, parseOpenVex } from "./vex/openvex.js";
import { vexLayer } from "./vex/vex-referrer.js";

/** Wharf's artifact (and layer) media type for a raw Grype or Trivy JSON report pushed as a referrer. */
export const WHARF_VULN_REPORT_ARTIFACT_TYPE = "application/vnd.wharf.vulnreport.v1+json";
/** cosign's attestation layers: a DSSE envelope of an in-toto statement. */
export const DSSE_ENVELOPE_MEDIA_TYPE = "application/vnd.dsse.envelope.v1+json";
/** A bare in-toto statement. */
export const IN_TOTO_MEDIA_TYPE = "application/vnd.in-toto+json";
/** Sigstore bundles (cosign v3's OCI 1.1 attestations), any version. */
const SIGSTORE_BUNDLE_PREFIX = "application/vnd.dev.sigstore.bundle";

/** Annotations that name an attestation's predicate type (cosign layer, in-toto, Sigstore bundle). */
const PREDICATE_ANNOTATIONS = [
  "predicateType",
  "in-toto.io/predicate-type",
  "dev.sigstore.bundle.predicateType",
];

function isAttestationType(type: string | undefined): boolean {
  return (
    type === DSSE_ENVELOPE_MEDIA_TYPE ||
    type === IN_TOTO_MEDIA_TYPE ||
    (type?.startsWith(SIGSTORE_BUNDLE_PREFIX) ?? false)
  );
}

/** False only when an annotation names a predicate type that is not a vulnerability attestation. */
function mayBeVulnPredicate(...annotations: (Record<string, string> | undefined)[]): boolean {
  for (const a of annotations) {
    for (const key of PREDICATE_ANNOTATIONS) {
      const type = a?.[key];
      if (type !== undefined)
        return type === COSIGN_VULN_PREDICATE || `https://${type}` === COSIGN_VULN_PREDICATE;
    }
  }
  return true;
}

/**
 * The layer of a pushed manifest that holds a vulnerability report for its `subject`, or undefined:
 * a manifest of artifactType {@link WHARF_VULN_REPORT_ARTIFACT_TYPE} (its first layer), or an
 * attestation (artifactType or layer media type DSSE envelope, in-toto statement or Sigstore
 * bundle) whose predicate-type annotations, when present, name the cosign vulnerability predicate.
 */
export function vulnReportLayer(parsed: ParsedManifest): Descriptor | undefined {
  if (!parsed.subject || parsed.kind !== "manifest") return undefined;
  if (parsed.artifactType === WHARF_VULN_REPORT_ARTIFACT_TYPE) return parsed.layers[0];
  if (!mayBeVulnPredicate(parsed.annotations)) return undefined;
  const attestation = isAttestationType(parsed.artifactType);
  return parsed.layers.find(
    (layer) =>
      (attestation ||
        isAttestationType(layer.mediaType) ||
        layer.mediaType === WHARF_VULN_REPORT_ARTIFACT_TYPE) &&
      mayBeVulnPredicate(layer.annotations),
  );
}

/** What happened to a referrer's report or VEX document, for the log. */
export type ReferrerOutcome =
  | { stored: true; reportUid: string; subject: string }
  | { stored: true; vexUid: string; subject: string }
  | { stored: false; subject: string; reason: string; vex?: true };

async function readLayer(deps: VulnReportServiceDeps, layer: Descriptor): Promise<Buffer> {
  if (layer.size > DEFAULT_VEX_MAX_BYTES) {
    throw new Error(`the VEX document is larger than ${DEFAULT_VEX_MAX_BYTES} bytes`);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of await deps.blobs.read(blobKey(parseDigest(layer.digest)))) {
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Whether a layer has no annotation naming its predicate type (so only its content tells). */
function unannotated(parsed: ParsedManifest, layer: Descriptor): boolean {
  return !PREDICATE_ANNOTATIONS.some(
    (key) => parsed.annotations?.[key] !== undefined || layer.annotations?.[key] !== undefined,
  );
}

/**
 * The bytes of an attestation layer that names no predicate type in its annotations when they are
 * an OpenVEX document (bare in-toto statement or DSSE envelope, at most the VEX size limit); else
 * undefined, and the layer is left to the vulnerability-report ingest.
 */
async function unannotatedVex(
  deps: VulnReportServiceDeps,
  parsed: ParsedManifest,
  layer: Descriptor | undefined,
): Promise<Buffer | undefined> {
  if (!layer || layer.mediaType === WHARF_VULN_REPORT_ARTIFACT_TYPE || !unannotated(parsed, layer))
    return undefined;
  if (parsed.artifactType === WHARF_VULN_REPORT_ARTIFACT_TYPE || layer.size > DEFAULT_VEX_MAX_BYTES)
    return undefined;
  try {
    const bytes = await readLayer(deps, layer);
    parseOpenVex(bytes);
    return bytes;
  } catch {
    return undefined;
  }
}

/**
 * Builds the registry's hook for pushed referrers: when a committed manifest carries an OpenVEX
 * document (see `vexLayer`; or an attestation whose annotations name no predicate type and whose
 * content is OpenVEX) or a vulnerability report (see {@link vulnReportLayer}) for its subject, it is read from the layer's blob and stored for the subject digest, as the pusher (same
 * rules as an upload). It runs after the push was answered; a document that fails (bad format,
 * subject not in the repo) never fails the push: `log` hears the outcome either way.
 */
export function createVulnReferrerIngest(
  deps: VulnReportServiceDeps & { clock: Clock; log: (outcome: ReferrerOutcome) => void },
): (args: {
  repoUid: string;
  parsed: ParsedManifest;
  principal: Principal;
  digest?: string;
}) => Promise<void> {
  return async ({ repoUid, parsed, principal, digest }) => {
    const subject = parsed.subject?.digest;
    if (!subject) return;
    const vex = vexLayer(parsed);
    const sniffed = vex ? undefined : await unannotatedVex(deps, parsed, vulnReportLayer(parsed));
    if (vex || sniffed) {
      try {
        const row = await ingestVexDocument(
          deps,
          { principal, clock: deps.clock },
          {
            repoUid,
            digest: subject,
            bytes: sniffed ?? (await readLayer(deps, vex as Descriptor)),
            source: "referrer",
            referrer: digest ?? "",
          },
        );
        deps.log({ stored: true, vexUid: row.uid, subject });
      } catch (err) {
        deps.log({
          stored: false,
          subject,
          reason: err instanceof Error ? err.message : String(err),
          vex: true,
        });
      }
      return;
    }
    const layer = vulnReportLayer(parsed);
    if (!layer || !subject) return;
    try {
      const source = await deps.blobs.read(blobKey(parseDigest(layer.digest)));
      const { row } = await ingestVulnReport(
        deps,
        { principal, clock: deps.clock },
        { repoUid, digest: subject, source: source as AsyncIterable<Uint8Array> },
      );
      deps.log({ stored: true, reportUid: row.uid, subject });
    } catch (err) {
      deps.log({ stored: false, subject, reason: err instanceof Error ? err.message : String(err) });
    }
  };
}
