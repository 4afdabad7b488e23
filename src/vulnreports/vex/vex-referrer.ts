import type { Descriptor, ParsedManifest } from "../../registry/manifest-parser.js";
import { OPENVEX_CONTEXT, OPENVEX_MEDIA_TYPE } from "./openvex.js";

/** Attestation media types: a DSSE envelope, a bare in-toto statement, a Sigstore bundle. */
function isAttestationType(type: string | undefined): boolean {
  return (
    type === "application/vnd.dsse.envelope.v1+json" ||
    type === "application/vnd.in-toto+json" ||
    (type?.startsWith("application/vnd.dev.sigstore.bundle") ?? false)
  );
}

/** Annotations naming an attestation's predicate type (cosign layer, in-toto, Sigstore bundle). */
const PREDICATE_ANNOTATIONS = [
  "predicateType",
  "in-toto.io/predicate-type",
  "dev.sigstore.bundle.predicateType",
];

function namesVexPredicate(annotations: Record<string, string> | undefined): boolean {
  return PREDICATE_ANNOTATIONS.some((key) => annotations?.[key]?.startsWith(OPENVEX_CONTEXT) ?? false);
}

/**
 * The layer of a pushed manifest that holds an OpenVEX document about its `subject`, or undefined:
 * a manifest of artifactType {@link OPENVEX_MEDIA_TYPE} (its layer of that media type, else its
 * first), any layer of that media type, or an attestation layer (DSSE envelope, in-toto statement,
 * Sigstore bundle) whose predicate-type annotation (on the layer or the manifest) names OpenVEX,
 * as `cosign attest --type openvex` writes. An attestation without such an annotation is left to
 * the vulnerability-report ingest.
 */
export function vexLayer(parsed: ParsedManifest): Descriptor | undefined {
  if (!parsed.subject || parsed.kind !== "manifest") return undefined;
  const typed = parsed.layers.find((l) => l.mediaType === OPENVEX_MEDIA_TYPE);
  if (parsed.artifactType === OPENVEX_MEDIA_TYPE) return typed ?? parsed.layers[0];
  if (typed) return typed;
  const attestation = isAttestationType(parsed.artifactType);
  return parsed.layers.find(
    (layer) =>
      (attestation || isAttestationType(layer.mediaType)) &&
      (namesVexPredicate(layer.annotations) || namesVexPredicate(parsed.annotations)),
  );
}
