import type { Descriptor, ParsedManifest } from "../../manifest-parser.js";

/** SPDX JSON media types: IANA's, and cosign's `text/spdx+json` (cosign's SBOM spec). */
export const SPDX_JSON_MEDIA_TYPES: readonly string[] = ["application/spdx+json", "text/spdx+json"];
/** CycloneDX JSON media type (IANA; cosign and oras use it too). */
export const CYCLONEDX_JSON_MEDIA_TYPE = "application/vnd.cyclonedx+json";
/** A bare in-toto statement (docker buildx attestations, oras). */
export const IN_TOTO_MEDIA_TYPE = "application/vnd.in-toto+json";
/** A DSSE envelope (cosign attestations: the `.att` tag's layers, OCI 1.1 referrers). */
export const DSSE_MEDIA_TYPE = "application/vnd.dsse.envelope.v1+json";
/** Sigstore bundles (cosign v3's OCI 1.1 attestations), any version. */
const SIGSTORE_BUNDLE_PREFIX = "application/vnd.dev.sigstore.bundle";

/** The in-toto predicate types of SBOMs (`cosign attest --type spdxjson|cyclonedx`), versioned or not. */
export const SPDX_PREDICATE = "https://spdx.dev/Document";
export const CYCLONEDX_PREDICATE = "https://cyclonedx.org/bom";

/**
 * Annotations naming an attestation's predicate type: docker buildx and oras (`in-toto.io/predicate-type`),
 * cosign's `.att` layers (`predicateType`), cosign's Sigstore bundle referrers (`dev.sigstore.bundle.predicateType`).
 */
const PREDICATE_ANNOTATIONS = [
  "in-toto.io/predicate-type",
  "predicateType",
  "dev.sigstore.bundle.predicateType",
];

/** The cosign tag suffixes that hold SBOMs of `sha256-<hex>`: `cosign attach sbom` and `cosign attest`. */
export const COSIGN_SBOM_TAG_SUFFIXES: readonly string[] = [".sbom", ".att"];

/** The media type without parameters (`application/vnd.cyclonedx+json; version=1.6` → `…+json`), lowercased. */
function bareType(type: string | undefined): string {
  return (type ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/** Whether `type` names an SPDX or CycloneDX JSON document. */
export function isSbomMediaType(type: string | undefined): boolean {
  const bare = bareType(type);
  return SPDX_JSON_MEDIA_TYPES.includes(bare) || bare === CYCLONEDX_JSON_MEDIA_TYPE;
}

/** Whether `type` names an attestation container: an in-toto statement, a DSSE envelope or a Sigstore bundle. */
export function isAttestationMediaType(type: string | undefined): boolean {
  const bare = bareType(type);
  return bare === IN_TOTO_MEDIA_TYPE || bare === DSSE_MEDIA_TYPE || bare.startsWith(SIGSTORE_BUNDLE_PREFIX);
}

/** Whether an in-toto predicate type is an SBOM's (`https://spdx.dev/Document`, `https://cyclonedx.org/bom`, or a versioned one below them). */
export function isSbomPredicate(type: string): boolean {
  return [SPDX_PREDICATE, CYCLONEDX_PREDICATE].some((p) => type === p || type.startsWith(`${p}/`));
}

/** The predicate type the annotations name, or undefined when none does. */
function predicateOf(annotations: Record<string, string> | undefined): string | undefined {
  for (const key of PREDICATE_ANNOTATIONS) {
    const value = annotations?.[key];
    if (value !== undefined) return value;
  }
  return undefined;
}

/**
 * The layer of `manifest` that holds an SBOM, or undefined. Recognition reads only the manifest (the
 * SBOM itself is not opened):
 * - a layer of SPDX or CycloneDX JSON media type (`cosign attach sbom`, `oras attach` with a typed file);
 * - an attestation layer (in-toto statement, DSSE envelope, Sigstore bundle, by its media type or the
 *   manifest's artifactType) whose predicate-type annotation (the layer's, else the manifest's) is an
 *   SBOM predicate (`cosign attest --type spdxjson|cyclonedx`, docker buildx `--sbom`);
 * - else, when the manifest's artifactType is an SBOM media type (`oras attach --artifact-type
 *   application/spdx+json` of an untyped file), its first layer.
 * An attestation with no predicate-type annotation is not recognised: it may be any predicate.
 */
export function sbomLayer(manifest: ParsedManifest): Descriptor | undefined {
  if (manifest.kind !== "manifest") return undefined;
  const attestationArtifact = isAttestationMediaType(manifest.artifactType);
  const manifestPredicate = predicateOf(manifest.annotations);
  for (const layer of manifest.layers) {
    if (isSbomMediaType(layer.mediaType)) return layer;
    if (!attestationArtifact && !isAttestationMediaType(layer.mediaType)) continue;
    const predicate = predicateOf(layer.annotations) ?? manifestPredicate;
    if (predicate !== undefined && isSbomPredicate(predicate)) return layer;
  }
  if (isSbomMediaType(manifest.artifactType)) return manifest.layers[0];
  return undefined;
}

/** The cosign tag names that may hold SBOMs of `digest` (`sha256-<hex>.sbom`, `sha256-<hex>.att`). */
export function cosignSbomTags(digest: string): string[] {
  const base = digest.replace(":", "-");
  return COSIGN_SBOM_TAG_SUFFIXES.map((suffix) => `${base}${suffix}`);
}

/** docker buildx's annotations on an index entry that is an attestation manifest of another entry. */
const BUILDX_REFERENCE_TYPE = "vnd.docker.reference.type";
const BUILDX_REFERENCE_DIGEST = "vnd.docker.reference.digest";

/**
 * The attestation manifests docker buildx (`--sbom`, `--attest`) stores in `index`, by the digest of
 * the image each describes: entries annotated `vnd.docker.reference.type: attestation-manifest` and
 * `vnd.docker.reference.digest: <image digest>`. Empty for other manifests.
 */
export function buildxAttestationsOf(index: ParsedManifest): Map<string, string[]> {
  const byImage = new Map<string, string[]>();
  if (index.kind !== "index") return byImage;
  for (const entry of index.manifests) {
    const image = entry.annotations?.[BUILDX_REFERENCE_DIGEST];
    if (entry.annotations?.[BUILDX_REFERENCE_TYPE] !== "attestation-manifest" || image === undefined)
      continue;
    byImage.set(image, [...(byImage.get(image) ?? []), entry.digest]);
  }
  return byImage;
}
