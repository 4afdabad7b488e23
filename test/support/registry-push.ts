/**
 * Small helpers to push blobs and manifests to a test server's registry over plain HTTP (fetch),
 * for end-to-end tests that do not need a real client such as skopeo.
 *
 * ```ts
 * const token = await wharf.registryToken();
 * const image = await pushImage(wharf, "acme/app", "latest", token, "v1");
 * // image.digest, image.configDigest, image.layerDigests, image.blobs (digest → bytes)
 * ```
 */
import { createHash } from "node:crypto";
import type { TestServer } from "./wharf-server.js";

/** What the helpers need from a test server. */
export type RegistryClient = Pick<TestServer, "registry">;

/**
 * A RegistryClient over fetch for the registry at `registryUrl` (a spawned server's): each request
 * carries `headers`, and `token` (or the request's own, which wins) as its bearer token; bodies
 * stream; redirects are returned, not followed.
 */
export function fetchRegistryClient(
  registryUrl: string,
  opts: { token?: string; headers?: Record<string, string> } = {},
): RegistryClient {
  return {
    registry: (path, init = {}) => {
      const token = init.token ?? opts.token;
      return fetch(`${registryUrl}${path}`, {
        method: init.method ?? "GET",
        headers: {
          ...opts.headers,
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
          ...init.headers,
        },
        ...(init.body === undefined ? {} : { body: init.body, duplex: "half" }),
        redirect: "manual",
      } as RequestInit);
    },
  };
}

/** Media type of an OCI image manifest. */
export const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
const OCI_CONFIG = "application/vnd.oci.image.config.v1+json";
const OCI_LAYER = "application/vnd.oci.image.layer.v1.tar";

/** The `sha256:<hex>` digest of `data`. */
export function sha256(data: Uint8Array | string): string {
  return `sha256:${createHash("sha256").update(data).digest("hex")}`;
}

/** A monolithic blob upload (POST `…/blobs/uploads/?digest=` with the bytes); the raw response. */
export function uploadBlob(
  server: RegistryClient,
  name: string,
  data: Uint8Array | string,
  token?: string,
): Promise<Response> {
  const bytes = Buffer.from(data);
  return server.registry(`/v2/${name}/blobs/uploads/?digest=${sha256(bytes)}`, {
    method: "POST",
    ...(token === undefined ? {} : { token }),
    headers: { "content-type": "application/octet-stream" },
    body: bytes,
  });
}

/** Uploads `data` as a blob of `name`; throws unless the registry answers 201. Returns its digest. */
export async function pushBlob(
  server: RegistryClient,
  name: string,
  data: Uint8Array | string,
  token?: string,
): Promise<string> {
  const res = await uploadBlob(server, name, data, token);
  const text = await res.text();
  if (res.status !== 201) throw new Error(`blob upload to ${name} answered ${res.status}: ${text}`);
  return sha256(Buffer.from(data));
}

/** PUT of manifest bytes at `/v2/<name>/manifests/<reference>`; the raw response. */
export function putManifest(
  server: RegistryClient,
  name: string,
  reference: string,
  manifest: Uint8Array,
  token?: string,
  mediaType = OCI_MANIFEST,
): Promise<Response> {
  return server.registry(`/v2/${name}/manifests/${reference}`, {
    method: "PUT",
    ...(token === undefined ? {} : { token }),
    headers: { "content-type": mediaType },
    body: manifest,
  });
}

/** A small OCI image built in memory: its manifest and every blob it references. */
export interface BuiltImage {
  /** Digest of the manifest bytes. */
  digest: string;
  manifest: Buffer;
  configDigest: string;
  layerDigests: string[];
  /** digest → bytes of the config and each layer. */
  blobs: Map<string, Buffer>;
}

/**
 * Builds an image from `seed`: a config naming the seed and one layer per entry of `layers`
 * (default: one layer `layer of <seed>`). Different seeds give different digests; the same
 * layer text gives the same layer blob (shared between images).
 */
export function buildImage(seed: string, layers: string[] = [`layer of ${seed}`]): BuiltImage {
  const config = Buffer.from(JSON.stringify({ architecture: "amd64", os: "linux", seed }));
  const layerBytes = layers.map((l) => Buffer.from(l));
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: OCI_CONFIG, digest: sha256(config), size: config.length },
      layers: layerBytes.map((b) => ({ mediaType: OCI_LAYER, digest: sha256(b), size: b.length })),
    }),
  );
  const blobs = new Map<string, Buffer>([[sha256(config), config]]);
  for (const b of layerBytes) blobs.set(sha256(b), b);
  return {
    digest: sha256(manifest),
    manifest,
    configDigest: sha256(config),
    layerDigests: layerBytes.map((b) => sha256(b)),
    blobs,
  };
}

/**
 * Pushes `image` (or `buildImage(image)` for a string) to `name` under `reference` (a tag or its
 * digest): every blob, then the manifest. Throws unless each step succeeds.
 */
export async function pushImage(
  server: RegistryClient,
  name: string,
  reference: string,
  token: string | undefined,
  image: string | BuiltImage,
): Promise<BuiltImage> {
  const built = typeof image === "string" ? buildImage(image) : image;
  for (const bytes of built.blobs.values()) await pushBlob(server, name, bytes, token);
  const res = await putManifest(server, name, reference, built.manifest, token);
  const text = await res.text();
  if (res.status !== 201)
    throw new Error(`manifest PUT ${name}:${reference} answered ${res.status}: ${text}`);
  const digest = res.headers.get("docker-content-digest");
  if (digest !== built.digest)
    throw new Error(`registry answered digest ${digest}, expected ${built.digest}`);
  return built;
}

/** Reads an OCI error envelope and returns its first error's code (and the whole body). */
export async function ociErrorOf(res: Response): Promise<{ code: string; message: string }> {
  const text = await res.text();
  let body: { errors?: { code: string; message: string }[] };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    throw new Error(`HTTP ${res.status}: not an OCI error envelope: ${text.slice(0, 300)}`);
  }
  const first = body.errors?.[0];
  if (!first) throw new Error(`HTTP ${res.status}: no errors in ${text.slice(0, 300)}`);
  return first;
}
