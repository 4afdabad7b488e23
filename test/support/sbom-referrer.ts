/**
 * Attaching a document (an SBOM, a VEX document, a vulnerability report…) to an image in a test
 * server's registry the way the tools do, over plain HTTP: an OCI 1.1 referrer (`oras attach`,
 * `cosign attest` in referrers mode, Sigstore bundles) or cosign's `sha256-<hex>.sbom` / `.att` tags.
 *
 * ```ts
 * const sbom = await attachReferrer(wharf, "acme/app", token, image.digest, readFileSync(spdx), {
 *   artifactType: "application/spdx+json",
 *   layerMediaType: "application/spdx+json",
 * });
 * ```
 */
import { EMPTY_BLOB_CONTENT, EMPTY_BLOB_DIGEST } from "../../src/registry/manifest-parser.js";
import { OCI_MANIFEST, pushBlob, putManifest, type RegistryClient, sha256 } from "./registry-push.js";

/** How the document is attached. */
export interface AttachOptions {
  /** The referrer manifest's artifactType; none when omitted (cosign's tag layouts have none). */
  artifactType?: string;
  /** The document layer's media type. */
  layerMediaType: string;
  layerAnnotations?: Record<string, string>;
  manifestAnnotations?: Record<string, string>;
  /** Push under this tag (cosign's `sha256-<hex>.sbom`/`.att`) instead of as a referrer with `subject`. */
  tag?: string;
  /** Push by digest without `subject` (docker buildx's attestation manifests, listed by an index). */
  detached?: boolean;
  /** The subject manifest's size (a referrer's `subject` descriptor needs it); default 2. */
  subjectSize?: number;
}

/** Pushes `document` as a referrer of `subject` in `name`; returns the referrer manifest's digest. */
export async function attachReferrer(
  server: RegistryClient,
  name: string,
  token: string | undefined,
  subject: string,
  document: Uint8Array | string,
  opts: AttachOptions,
): Promise<string> {
  const bytes = Buffer.from(document);
  await pushBlob(server, name, EMPTY_BLOB_CONTENT, token);
  const layerDigest = await pushBlob(server, name, bytes, token);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      ...(opts.artifactType ? { artifactType: opts.artifactType } : {}),
      config: { mediaType: "application/vnd.oci.empty.v1+json", digest: EMPTY_BLOB_DIGEST, size: 2 },
      layers: [
        {
          mediaType: opts.layerMediaType,
          digest: layerDigest,
          size: bytes.length,
          ...(opts.layerAnnotations ? { annotations: opts.layerAnnotations } : {}),
        },
      ],
      ...(opts.tag || opts.detached
        ? {}
        : { subject: { mediaType: OCI_MANIFEST, digest: subject, size: opts.subjectSize ?? 2 } }),
      ...(opts.manifestAnnotations ? { annotations: opts.manifestAnnotations } : {}),
    }),
  );
  const digest = sha256(manifest);
  const res = await putManifest(server, name, opts.tag ?? digest, manifest, token);
  const text = await res.text();
  if (res.status !== 201) throw new Error(`referrer manifest PUT ${name} answered ${res.status}: ${text}`);
  return digest;
}
