import type { Clock } from "../../../core/clock.js";
import { type ChangeFeed, touches } from "../../../storage/change-feed.js";
import type { RegistryContent } from "../../data-plane/registry-content.js";
import {
  type SignatureCheck,
  type SignatureLayout,
  type SignatureVerifier,
  SUPPLY_CHAIN_TABLES,
  type TrustedKeyring,
  type VerifiedSigner,
} from "../supply-chain.js";
import { type BlobReader, readSmallBlob } from "./bounded-read.js";
import { publicKeyOf } from "./key-verify.js";
import { checkBundle, isSigstoreBundleType, type SigstoreTrustedRoot } from "./sigstore-bundle.js";
import {
  COSIGN_SIGNATURE_ANNOTATION,
  checkSimpleSigning,
  SIMPLE_SIGNING_MEDIA_TYPE,
  type UsableKey,
  unverified,
  type Verdict,
} from "./simple-signing.js";

/** The config media type (so artifact type) of cosign's OCI 1.1 signature referrers. */
export const COSIGN_SIG_ARTIFACT_TYPE = "application/vnd.dev.cosign.artifact.sig.v1+json";

/** Limits on what one image's signatures may cost. */
export interface SignatureLimits {
  /** Bytes of one simple-signing payload (default 64 KiB). */
  maxPayloadBytes: number;
  /** Bytes of one Sigstore bundle (default 256 KiB: certificate chains and log proofs). */
  maxBundleBytes: number;
  /** Signatures looked at per image, both layouts together (default 100); the rest are ignored. */
  maxSignatures: number;
}

/** The default limits. */
export const DEFAULT_SIGNATURE_LIMITS: SignatureLimits = {
  maxPayloadBytes: 64 * 1024,
  maxBundleBytes: 256 * 1024,
  maxSignatures: 100,
};

/** What the verifier reads of the registry's content. */
export type SignatureContent = Pick<RegistryContent, "tagDigest" | "manifest" | "referrers"> & BlobReader;

/** A verifier that also says when it is done with its change-feed subscription. */
export interface SignatureVerifierHandle extends SignatureVerifier {
  verifiedSigners(repo: { uid: string; name: string }, digest: string): Promise<VerifiedSigner[]>;
  /** Unsubscribes from the change feed (the cache stops being dropped on changes). */
  close(): void;
}

const DEFAULT_TTL_MS = 60_000;
const MAX_CACHED = 10_000;

/**
 * Creates the signature verifier over the registry's content and the trusted keyring. Checks are
 * cached per (repo, digest) and the whole cache is dropped when a change-feed batch touches a
 * supply-chain table (a key, a manifest or tag: a new signature, a deleted one), and after `ttlMs`
 * (default a minute) in any case. `trustedRoot` (`--sigstore-trusted-root`) enables keyless bundles.
 */
export function createSignatureVerifier(deps: {
  content: SignatureContent;
  keyring: TrustedKeyring;
  changes: ChangeFeed;
  clock: Clock;
  trustedRoot?: SigstoreTrustedRoot | undefined;
  limits?: Partial<SignatureLimits>;
  ttlMs?: number;
}): SignatureVerifierHandle {
  const { content, keyring, clock } = deps;
  const limits = { ...DEFAULT_SIGNATURE_LIMITS, ...deps.limits };
  const ttlMs = deps.ttlMs ?? DEFAULT_TTL_MS;
  const cache = new Map<string, { checks: Promise<SignatureCheck[]>; expires: number }>();
  // Bumped on every relevant change: a check that began before it may predate it, so is not kept.
  let generation = 0;
  const unsubscribe = deps.changes.subscribe((batch) => {
    if (touches(batch, SUPPLY_CHAIN_TABLES)) {
      generation++;
      cache.clear();
    }
  });

  async function usableKeys(repoUid: string): Promise<UsableKey[]> {
    const out: UsableKey[] = [];
    for (const key of await keyring.keysFor(repoUid)) {
      const publicKey = publicKeyOf(key.publicKeyPem);
      if (publicKey) out.push({ key, publicKey });
    }
    return out;
  }

  async function check(repo: { uid: string; name: string }, digest: string): Promise<SignatureCheck[]> {
    const keys = await usableKeys(repo.uid);
    const out: SignatureCheck[] = [];
    const room = () => out.length < limits.maxSignatures;
    const tagged = await content.tagDigest(repo.uid, `${digest.replace(":", "-")}.sig`);
    if (tagged !== undefined) await simpleSigningOf(repo.uid, digest, tagged, "cosign-tag", keys, out, room);
    const referrers = await content.referrers(repo.uid, digest, undefined);
    for (const r of referrers) {
      if (!room()) break;
      if (r.artifactType === COSIGN_SIG_ARTIFACT_TYPE || r.artifactType === SIMPLE_SIGNING_MEDIA_TYPE) {
        await simpleSigningOf(repo.uid, digest, r.digest, "cosign-referrer", keys, out, room);
      } else if (isSigstoreBundleType(r.artifactType)) {
        await bundlesOf(repo.uid, digest, r.digest, keys, out, room);
      }
    }
    return out;
  }

  /** The simple-signing layers of signature manifest `referrer`, each checked, into `out`. */
  async function simpleSigningOf(
    repoUid: string,
    digest: string,
    referrer: string,
    layout: SignatureLayout,
    keys: UsableKey[],
    out: SignatureCheck[],
    room: () => boolean,
  ): Promise<void> {
    const push = (v: Verdict) => out.push({ referrer, layout, ...v });
    const layers = await layersOf(repoUid, referrer);
    if (typeof layers === "string") return void push(unverified(layers));
    for (const layer of layers) {
      if (!room()) return;
      if (layer.mediaType !== SIMPLE_SIGNING_MEDIA_TYPE) continue;
      const read = await readSmallBlob(content, repoUid, layer.digest, limits.maxPayloadBytes);
      if ("error" in read) {
        push(unverified(`signature payload ${read.error}`));
        continue;
      }
      const annotation = layer.annotations?.[COSIGN_SIGNATURE_ANNOTATION];
      push(
        checkSimpleSigning(digest, read.bytes, typeof annotation === "string" ? annotation : undefined, keys),
      );
    }
  }

  /** The Sigstore bundle layers of referrer `referrer`, each checked, into `out`. */
  async function bundlesOf(
    repoUid: string,
    digest: string,
    referrer: string,
    keys: UsableKey[],
    out: SignatureCheck[],
    room: () => boolean,
  ): Promise<void> {
    const push = (v: Verdict) => out.push({ referrer, layout: "sigstore-bundle", ...v });
    const layers = await layersOf(repoUid, referrer);
    if (typeof layers === "string") return void push(unverified(layers));
    const image = (await content.manifest(repoUid, digest))?.content;
    for (const layer of layers) {
      if (!room()) return;
      if (!isSigstoreBundleType(layer.mediaType)) continue;
      const read = await readSmallBlob(content, repoUid, layer.digest, limits.maxBundleBytes);
      if ("error" in read) {
        push(unverified(`Sigstore bundle ${read.error}`));
        continue;
      }
      push(checkBundle(digest, read.bytes, image, keys, deps.trustedRoot));
    }
  }

  /** The layer descriptors of manifest `digest`, or why there are none. */
  async function layersOf(repoUid: string, digest: string): Promise<LayerDescriptor[] | string> {
    const manifest = await content.manifest(repoUid, digest);
    if (!manifest) return "signature manifest is missing";
    let body: unknown;
    try {
      body = JSON.parse(Buffer.from(manifest.content).toString("utf8"));
    } catch {
      return "malformed signature manifest: not JSON";
    }
    const layers = (body as { layers?: unknown })?.layers;
    if (!Array.isArray(layers)) return "malformed signature manifest: no layers";
    return layers.filter(isLayerDescriptor);
  }

  async function signatures(repo: { uid: string; name: string }, digest: string): Promise<SignatureCheck[]> {
    const key = `${repo.uid}\n${digest}`;
    const held = cache.get(key);
    if (held && held.expires > clock.now()) return held.checks;
    const started = generation;
    const checks = check(repo, digest);
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(key, { checks, expires: clock.now() + ttlMs });
    checks.then(
      () => {
        // A change landed while checking: the answer may predate it.
        if (started !== generation && cache.get(key)?.checks === checks) cache.delete(key);
      },
      () => {
        if (cache.get(key)?.checks === checks) cache.delete(key);
      },
    );
    return checks;
  }

  return {
    signatures,
    async verifiedSigners(repo, digest) {
      // No trusted key and no keyless root: nothing can verify, so nothing needs reading.
      if (!deps.trustedRoot && (await keyring.keysFor(repo.uid)).length === 0) return [];
      return signersOf(await signatures(repo, digest));
    },
    close: unsubscribe,
  };
}

/** The distinct signers of the checks that verified, in order. */
export function signersOf(checks: readonly SignatureCheck[]): VerifiedSigner[] {
  const seen = new Map<string, string>();
  for (const c of checks) if (c.verified && !seen.has(c.keyUid)) seen.set(c.keyUid, c.keyName);
  return [...seen].map(([keyUid, keyName]) => ({ keyUid, keyName }));
}

interface LayerDescriptor {
  mediaType: string;
  digest: string;
  annotations?: Record<string, string>;
}

function isLayerDescriptor(v: unknown): v is LayerDescriptor {
  const d = v as LayerDescriptor;
  return (
    typeof v === "object" &&
    v !== null &&
    typeof d.mediaType === "string" &&
    typeof d.digest === "string" &&
    (d.annotations === undefined || (typeof d.annotations === "object" && d.annotations !== null))
  );
}
