/**
 * Real cosign-format image signatures made with node:crypto (there is no cosign binary here), and
 * pushed to a Wharf registry over HTTP in either of cosign's layouts.
 *
 * What cosign writes (sigstore/cosign `pkg/oci/remote/write.go`, `pkg/signature`):
 * - the payload is the "simple signing" JSON naming the image digest;
 * - ECDSA keys sign the SHA-256 of the payload (ASN.1 DER signature), Ed25519 signs the payload
 *   itself, RSA uses PKCS#1 v1.5 with SHA-256;
 * - the base64 signature is the layer annotation `dev.cosignproject.cosign/signature`;
 * - tag layout: an OCI image tagged `sha256-<hex>.sig` in the image's repo, config
 *   `application/vnd.oci.image.config.v1+json` (go-containerregistry's empty image), one layer per
 *   signature, layers appended when the tag already exists;
 * - OCI 1.1 layout (`--registry-referrers-mode=oci-1-1`): the same manifest with the config media
 *   type `application/vnd.dev.cosign.artifact.sig.v1+json` (the referrers API reports it as the
 *   artifact type) and `subject` = the image.
 *
 * ```ts
 * const key = generateCosignKey("ecdsa-p256");
 * const sig = await signImage({ registry: wharf, token, repo: "acme/app", digest, key, layout: "tag" });
 * // sig.referrer: the signature manifest's digest
 * ```
 */
import { createHash, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { OCI_MANIFEST, pushBlob, putManifest, type RegistryClient, sha256 } from "./registry-push.js";

/** Key types cosign signs with (and Wharf trusts). */
export type CosignKeyType = "ecdsa-p256" | "ecdsa-p384" | "ed25519" | "rsa-2048" | "rsa-3072";

/** Every key type, for tests that run one case per type. */
export const COSIGN_KEY_TYPES: readonly CosignKeyType[] = [
  "ecdsa-p256",
  "ecdsa-p384",
  "ed25519",
  "rsa-2048",
  "rsa-3072",
];

/** A signing key pair: the private key stays in the test, the SPKI PEM is what gets registered. */
export interface CosignKey {
  type: CosignKeyType;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** SPKI PEM (`-----BEGIN PUBLIC KEY-----`), as `cosign.pub` holds it. */
  publicKeyPem: string;
}

/** The simple-signing layer's media type. */
export const SIMPLE_SIGNING_MEDIA_TYPE = "application/vnd.dev.cosign.simplesigning.v1+json";
/** The layer annotation holding the base64 signature. */
export const COSIGN_SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature";
/** The config media type (and so artifact type) of cosign's OCI 1.1 signature referrers. */
export const COSIGN_SIG_ARTIFACT_TYPE = "application/vnd.dev.cosign.artifact.sig.v1+json";
const OCI_CONFIG = "application/vnd.oci.image.config.v1+json";

/** A fresh key pair of `type`. */
export function generateCosignKey(type: CosignKeyType): CosignKey {
  const pair =
    type === "ed25519"
      ? generateKeyPairSync("ed25519")
      : type === "ecdsa-p256" || type === "ecdsa-p384"
        ? generateKeyPairSync("ec", { namedCurve: type === "ecdsa-p256" ? "P-256" : "P-384" })
        : generateKeyPairSync("rsa", { modulusLength: type === "rsa-2048" ? 2048 : 3072 });
  return {
    type,
    privateKey: pair.privateKey,
    publicKey: pair.publicKey,
    publicKeyPem: pair.publicKey.export({ type: "spki", format: "pem" }).toString(),
  };
}

/** The simple-signing payload cosign signs for `dockerReference` (`<registry>/<repo>`) at `digest`. */
export function simpleSigningPayload(dockerReference: string, digest: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      critical: {
        identity: { "docker-reference": dockerReference },
        image: { "docker-manifest-digest": digest },
        type: "cosign container image signature",
      },
      optional: null,
    }),
  );
}

/** The raw signature bytes cosign makes over `payload` with `key`. */
export function signPayload(key: CosignKey, payload: Uint8Array): Buffer {
  switch (key.type) {
    case "ed25519":
      return sign(null, payload, key.privateKey);
    case "ecdsa-p256":
    case "ecdsa-p384":
      // cosign hashes with SHA-256 whatever the curve; DER is node's default ECDSA encoding.
      return sign("sha256", payload, { key: key.privateKey, dsaEncoding: "der" });
    default:
      return sign("sha256", payload, { key: key.privateKey, padding: 1 /* RSA_PKCS1_PADDING */ });
  }
}

/** One signature layer: the payload bytes and the annotation cosign puts beside them. */
export interface SignatureLayer {
  payload: Buffer;
  /** The annotation value (normally base64 of the signature; tests may put anything). */
  signature: string;
}

/** The subject descriptor of an OCI 1.1 referrer. */
export interface Subject {
  mediaType: string;
  digest: string;
  size: number;
}

/** A signature manifest built in memory, with the blobs it references. */
export interface SignatureManifest {
  manifest: Buffer;
  digest: string;
  blobs: Buffer[];
}

/**
 * The manifest cosign writes for `layers`: the tag layout's image, or with `subject` the OCI 1.1
 * referrer (config media type = cosign's signature artifact type).
 */
export function signatureManifest(layers: SignatureLayer[], subject?: Subject): SignatureManifest {
  const layerDescriptors = layers.map((l) => ({
    mediaType: SIMPLE_SIGNING_MEDIA_TYPE,
    size: l.payload.length,
    digest: sha256(l.payload),
    annotations: { [COSIGN_SIGNATURE_ANNOTATION]: l.signature },
  }));
  const config = Buffer.from(
    JSON.stringify({
      architecture: "",
      created: "0001-01-01T00:00:00Z",
      history: layers.map(() => ({ created: "0001-01-01T00:00:00Z" })),
      os: "",
      rootfs: { type: "layers", diff_ids: layerDescriptors.map((d) => d.digest) },
      config: {},
    }),
  );
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: {
        mediaType: subject ? COSIGN_SIG_ARTIFACT_TYPE : OCI_CONFIG,
        size: config.length,
        digest: sha256(config),
      },
      layers: layerDescriptors,
      ...(subject ? { subject } : {}),
    }),
  );
  return { manifest, digest: sha256(manifest), blobs: [config, ...layers.map((l) => l.payload)] };
}

/** The cosign signature tag of `digest`: `sha256-<hex>.sig`. */
export function signatureTag(digest: string): string {
  return `${digest.replace(":", "-")}.sig`;
}

/** What `signImage` pushed. */
export interface PushedSignature {
  /** The digest of the signature manifest (what ListSignatures calls `referrer`). */
  referrer: string;
  /** The signed payload and the annotation value pushed beside it. */
  layer: SignatureLayer;
}

/**
 * Signs image `digest` of `repo` with `key` as cosign would and pushes the signature in `layout`.
 * The tag layout appends a layer to an existing `.sig` tag (as cosign does for a second signer).
 * - `payloadDigest`: the digest the payload names (default `digest`): another image's digest makes
 *   a copied signature, which must not verify;
 * - `dockerReference`: the payload's identity (default `localhost/<repo>`);
 * - `tamper`: changes the payload after signing (the signature no longer matches);
 * - `annotation`: the annotation value to push instead of the real signature (malformed cases).
 */
export async function signImage(args: {
  registry: RegistryClient;
  token?: string;
  repo: string;
  digest: string;
  key: CosignKey;
  layout: "tag" | "referrer";
  payloadDigest?: string;
  dockerReference?: string;
  tamper?: boolean;
  annotation?: string;
  payload?: Buffer;
}): Promise<PushedSignature> {
  const { registry, token, repo, digest, key } = args;
  const signed =
    args.payload ??
    simpleSigningPayload(args.dockerReference ?? `localhost/${repo}`, args.payloadDigest ?? digest);
  const signature = args.annotation ?? signPayload(key, signed).toString("base64");
  const payload = args.tamper
    ? Buffer.from(signed.toString().replace("cosign container", "cosign  container"))
    : signed;
  const layer: SignatureLayer = { payload, signature };
  return { referrer: await pushSignatureLayers(registry, repo, digest, [layer], args.layout, token), layer };
}

/**
 * Pushes `layers` as a cosign signature of `digest` in `layout` (tag: appended to the `.sig` tag's
 * existing layers); returns the signature manifest's digest.
 */
export async function pushSignatureLayers(
  registry: RegistryClient,
  repo: string,
  digest: string,
  layers: SignatureLayer[],
  layout: "tag" | "referrer",
  token?: string,
): Promise<string> {
  let built: SignatureManifest;
  let reference: string;
  if (layout === "tag") {
    reference = signatureTag(digest);
    const existing = await existingLayers(registry, repo, reference, token);
    built = signatureManifest([...existing, ...layers]);
  } else {
    const subject = await subjectOf(registry, repo, digest, token);
    built = signatureManifest(layers, subject);
    reference = built.digest;
  }
  for (const blob of built.blobs) await pushBlob(registry, repo, blob, token);
  const res = await putManifest(registry, repo, reference, built.manifest, token);
  const text = await res.text();
  if (res.status !== 201)
    throw new Error(`signature PUT ${repo}:${reference} answered ${res.status}: ${text}`);
  return built.digest;
}

/** The layers (payload and annotation) of the `.sig` tag `reference`, or none when it is absent. */
async function existingLayers(
  registry: RegistryClient,
  repo: string,
  reference: string,
  token: string | undefined,
): Promise<SignatureLayer[]> {
  const auth = token === undefined ? {} : { token };
  const res = await registry.registry(`/v2/${repo}/manifests/${reference}`, {
    ...auth,
    headers: { accept: OCI_MANIFEST },
  });
  if (res.status === 404) {
    await res.body?.cancel();
    return [];
  }
  if (res.status !== 200) throw new Error(`GET ${repo}:${reference} answered ${res.status}`);
  const manifest = (await res.json()) as {
    layers: { digest: string; annotations?: Record<string, string> }[];
  };
  const out: SignatureLayer[] = [];
  for (const l of manifest.layers) {
    const blob = await registry.registry(`/v2/${repo}/blobs/${l.digest}`, auth);
    if (blob.status !== 200) throw new Error(`GET blob ${l.digest} answered ${blob.status}`);
    out.push({
      payload: Buffer.from(await blob.arrayBuffer()),
      signature: l.annotations?.[COSIGN_SIGNATURE_ANNOTATION] ?? "",
    });
  }
  return out;
}

/** SHA-256 hex of `data` (for bundle subjects). */
export function sha256Hex(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** The artifact type (and layer media type) of the Sigstore bundles cosign writes as referrers. */
export const SIGSTORE_BUNDLE_V03 = "application/vnd.dev.sigstore.bundle.v0.3+json";

/**
 * A Sigstore bundle signed with `key` (public-key verification material with `hint`), built with
 * `@sigstore/sign`'s bundle builders and no witnesses (no Rekor entry: nothing is reachable here):
 * - `dsse`: an in-toto statement whose subject is `subjectDigest` (as cosign's new bundle format
 *   signs an image), in a DSSE envelope;
 * - `message`: a message signature over `artifact` (the image manifest's bytes).
 * Returns the bundle's JSON bytes.
 */
export async function sigstoreBundle(args: {
  key: CosignKey;
  kind: "dsse" | "message";
  subjectDigest: string;
  artifact?: Uint8Array;
  hint?: string;
  repo?: string;
}): Promise<Buffer> {
  const { DSSEBundleBuilder, MessageSignatureBundleBuilder } = await import("@sigstore/sign");
  const { bundleToJSON } = await import("@sigstore/bundle");
  const signer = {
    sign: async (data: Buffer) => ({
      signature: signPayload(args.key, data),
      key: { $case: "publicKey" as const, publicKey: args.key.publicKeyPem, hint: args.hint ?? "wharf-test" },
    }),
  };
  if (args.kind === "message") {
    if (!args.artifact) throw new Error("a message bundle signs an artifact");
    const bundle = await new MessageSignatureBundleBuilder({ signer, witnesses: [] }).create({
      data: Buffer.from(args.artifact),
    });
    return Buffer.from(JSON.stringify(bundleToJSON(bundle)));
  }
  const statement = {
    _type: "https://in-toto.io/Statement/v1",
    subject: [
      {
        name: args.repo ?? "localhost/image",
        digest: { sha256: args.subjectDigest.replace(/^sha256:/, "") },
      },
    ],
    predicateType: "https://sigstore.dev/cosign/sign/v1",
    predicate: {},
  };
  const bundle = await new DSSEBundleBuilder({ signer, witnesses: [] }).create({
    data: Buffer.from(JSON.stringify(statement)),
    type: "application/vnd.in-toto+json",
  });
  return Buffer.from(JSON.stringify(bundleToJSON(bundle)));
}

/**
 * The referrer manifest cosign writes for a bundle (`WriteReferrer`): empty config
 * `application/vnd.oci.empty.v1+json` carrying the artifact type, one bundle layer, `subject`.
 */
export function bundleReferrerManifest(bundle: Buffer, subject: Subject, mediaType = SIGSTORE_BUNDLE_V03) {
  const config = Buffer.from("{}");
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: {
        mediaType: "application/vnd.oci.empty.v1+json",
        artifactType: mediaType,
        digest: sha256(config),
        size: config.length,
      },
      layers: [{ mediaType, digest: sha256(bundle), size: bundle.length }],
      subject,
      annotations: { "dev.sigstore.bundle.content": "dsse-envelope" },
      artifactType: mediaType,
    }),
  );
  return { manifest, digest: sha256(manifest), blobs: [config, bundle] } satisfies SignatureManifest;
}

/** Pushes `bundle` as an OCI 1.1 referrer of image `digest` (as cosign does); returns its digest. */
export async function pushBundle(args: {
  registry: RegistryClient;
  token?: string;
  repo: string;
  digest: string;
  bundle: Buffer;
}): Promise<string> {
  const { registry, token, repo, digest } = args;
  const subject = await subjectOf(registry, repo, digest, token);
  const built = bundleReferrerManifest(args.bundle, subject);
  for (const blob of built.blobs) await pushBlob(registry, repo, blob, token);
  const res = await putManifest(registry, repo, built.digest, built.manifest, token);
  const text = await res.text();
  if (res.status !== 201)
    throw new Error(`bundle PUT ${repo}@${built.digest} answered ${res.status}: ${text}`);
  return built.digest;
}

/** The subject descriptor of image `digest` of `repo` (one HEAD). */
export async function subjectOf(
  registry: RegistryClient,
  repo: string,
  digest: string,
  token?: string,
): Promise<Subject> {
  const head = await registry.registry(`/v2/${repo}/manifests/${digest}`, {
    method: "HEAD",
    ...(token === undefined ? {} : { token }),
    headers: { accept: OCI_MANIFEST },
  });
  if (head.status !== 200) throw new Error(`HEAD ${repo}@${digest} answered ${head.status}`);
  return {
    mediaType: head.headers.get("content-type") ?? OCI_MANIFEST,
    digest,
    size: Number(head.headers.get("content-length")),
  };
}

/**
 * A keyless-style Sigstore bundle: a message signature over `artifact` by the private key
 * `keyPem`, with the certificate `certPem` (e.g. one a throwaway CA issued) as verification
 * material, and no transparency-log entry or timestamp (none can be made here).
 */
export async function certificateBundle(args: { certPem: string; keyPem: string; artifact: Uint8Array }) {
  const { MessageSignatureBundleBuilder } = await import("@sigstore/sign");
  const { bundleToJSON } = await import("@sigstore/bundle");
  const signer = {
    sign: async (data: Buffer) => ({
      signature: sign("sha256", data, args.keyPem),
      key: { $case: "x509Certificate" as const, certificate: args.certPem },
    }),
  };
  const bundle = await new MessageSignatureBundleBuilder({ signer, witnesses: [] }).create({
    data: Buffer.from(args.artifact),
  });
  return Buffer.from(JSON.stringify(bundleToJSON(bundle)));
}
