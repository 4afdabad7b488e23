import type { ManifestReference } from "../storage/registry-store.js";
import { InvalidManifestError } from "./content-errors.js";
import { parseDigest } from "./digest.js";

export const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
export const OCI_INDEX = "application/vnd.oci.image.index.v1+json";
export const DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json";
export const DOCKER_MANIFEST_LIST = "application/vnd.docker.distribution.manifest.list.v2+json";

/** The OCI "empty" descriptor's blob (`{}`), which artifacts may reference without pushing it. */
export const EMPTY_BLOB_DIGEST = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";
export const EMPTY_BLOB_CONTENT = Buffer.from("{}");

/** Largest manifest accepted (OCI recommends supporting at least 4 MiB). */
export const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

const SINGLE = new Set([OCI_MANIFEST, DOCKER_MANIFEST]);
const INDEXES = new Set([OCI_INDEX, DOCKER_MANIFEST_LIST]);
/** Content types that say nothing about the manifest kind; the body's `mediaType` decides. */
const GENERIC = new Set(["", "application/json", "application/octet-stream"]);

/** A content descriptor (OCI image spec). */
export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  artifactType?: string;
  annotations?: Record<string, string>;
  platform?: { architecture: string; os: string; variant?: string };
  urls?: string[];
}

/** What the registry needs from a manifest it accepts. */
export interface ParsedManifest {
  mediaType: string;
  kind: "manifest" | "index";
  /** Blobs (config, layers; not foreign layers with `urls`) and child manifests that must exist in the repo. */
  references: ManifestReference[];
  config?: Descriptor;
  layers: Descriptor[];
  /** Index entries. */
  manifests: Descriptor[];
  subject?: Descriptor;
  /** For the referrers API: `artifactType`, else (single manifests) the config media type. */
  artifactType?: string;
  annotations?: Record<string, string>;
}

/**
 * Validates a manifest body against its Content-Type and the OCI image spec (schemaVersion 2;
 * OCI/Docker manifests need `config` and `layers`, indexes `manifests`; every descriptor needs a
 * media type, a valid digest and a non-negative integer size). Throws InvalidManifestError naming
 * the first problem. The Content-Type wins; a generic one (or none) defers to the body's `mediaType`,
 * then to the shape of the document.
 */
export function parseManifest(content: Uint8Array, contentType: string | undefined): ParsedManifest {
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(content).toString("utf8"));
  } catch {
    throw new InvalidManifestError("manifest is not valid JSON");
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    throw new InvalidManifestError("manifest must be a JSON object");
  }
  const body = doc as Record<string, unknown>;
  if (body.schemaVersion !== 2) throw new InvalidManifestError("schemaVersion must be 2");
  const declared = typeof body.mediaType === "string" ? body.mediaType : undefined;
  if (body.mediaType !== undefined && declared === undefined) {
    throw new InvalidManifestError("mediaType must be a string");
  }
  const header = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  let mediaType: string;
  if (!GENERIC.has(header)) {
    if (!SINGLE.has(header) && !INDEXES.has(header)) {
      throw new InvalidManifestError(`unsupported manifest media type "${header}"`, {
        supported: [OCI_MANIFEST, OCI_INDEX, DOCKER_MANIFEST, DOCKER_MANIFEST_LIST],
      });
    }
    if (declared !== undefined && declared !== header) {
      throw new InvalidManifestError(`mediaType "${declared}" does not match Content-Type "${header}"`);
    }
    mediaType = header;
  } else if (declared !== undefined) {
    if (!SINGLE.has(declared) && !INDEXES.has(declared)) {
      throw new InvalidManifestError(`unsupported manifest media type "${declared}"`);
    }
    mediaType = declared;
  } else {
    mediaType = Array.isArray(body.manifests) ? OCI_INDEX : OCI_MANIFEST;
  }

  const annotations = stringMap(body.annotations, "annotations");
  const subject = body.subject === undefined ? undefined : descriptor(body.subject, "subject");
  if (body.artifactType !== undefined && typeof body.artifactType !== "string") {
    throw new InvalidManifestError("artifactType must be a string");
  }
  const artifactType = body.artifactType as string | undefined;
  const common = {
    mediaType,
    ...(subject ? { subject } : {}),
    ...(annotations ? { annotations } : {}),
  };

  if (INDEXES.has(mediaType)) {
    if (!Array.isArray(body.manifests)) throw new InvalidManifestError("an index needs a manifests array");
    const manifests = body.manifests.map((d, i) => descriptor(d, `manifests[${i}]`));
    return {
      ...common,
      kind: "index",
      references: manifests.map((d) => ({ digest: d.digest, kind: "manifest" as const })),
      layers: [],
      manifests,
      ...(artifactType ? { artifactType } : {}),
    };
  }
  if (body.config === undefined) throw new InvalidManifestError("a manifest needs a config descriptor");
  const config = descriptor(body.config, "config");
  if (!Array.isArray(body.layers)) throw new InvalidManifestError("a manifest needs a layers array");
  const layers = body.layers.map((d, i) => descriptor(d, `layers[${i}]`));
  const blobs = [config, ...layers.filter((l) => !l.urls || l.urls.length === 0)];
  return {
    ...common,
    kind: "manifest",
    references: blobs.map((d) => ({ digest: d.digest, kind: "blob" as const })),
    config,
    layers,
    manifests: [],
    artifactType: artifactType ?? config.mediaType,
  };
}

function descriptor(value: unknown, field: string): Descriptor {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidManifestError(`${field} must be a descriptor object`);
  }
  const d = value as Record<string, unknown>;
  if (typeof d.mediaType !== "string" || d.mediaType === "") {
    throw new InvalidManifestError(`${field}.mediaType is required`);
  }
  if (typeof d.digest !== "string") throw new InvalidManifestError(`${field}.digest is required`);
  try {
    parseDigest(d.digest);
  } catch {
    throw new InvalidManifestError(`${field}.digest "${d.digest.slice(0, 80)}" is not a valid digest`);
  }
  if (typeof d.size !== "number" || !Number.isSafeInteger(d.size) || d.size < 0) {
    throw new InvalidManifestError(`${field}.size must be a non-negative integer`);
  }
  const out: Descriptor = { mediaType: d.mediaType, digest: d.digest, size: d.size };
  if (typeof d.artifactType === "string") out.artifactType = d.artifactType;
  const annotations = stringMap(d.annotations, `${field}.annotations`);
  if (annotations) out.annotations = annotations;
  if (Array.isArray(d.urls)) out.urls = d.urls.filter((u): u is string => typeof u === "string");
  if (typeof d.platform === "object" && d.platform !== null) {
    const p = d.platform as Record<string, unknown>;
    if (typeof p.architecture !== "string" || typeof p.os !== "string") {
      throw new InvalidManifestError(`${field}.platform needs architecture and os`);
    }
    out.platform = {
      architecture: p.architecture,
      os: p.os,
      ...(typeof p.variant === "string" ? { variant: p.variant } : {}),
    };
  }
  return out;
}

function stringMap(value: unknown, field: string): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value))
    throw new InvalidManifestError(`${field} must be an object`);
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== "string") throw new InvalidManifestError(`${field}.${k} must be a string`);
  }
  return value as Record<string, string>;
}
