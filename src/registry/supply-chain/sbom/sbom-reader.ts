import type { Readable } from "node:stream";
import { setBounded } from "../../../core/bounded-map.js";
import { blobKey } from "../../../storage/blobs/blob-layout.js";
import type { Store } from "../../../storage/store.js";
import { parseDigest } from "../../digest.js";
import { type Descriptor, parseManifest } from "../../manifest-parser.js";
import type { ImageSbom, SbomReader } from "../supply-chain.js";
import { SbomFormatError } from "./sbom-errors.js";
import { parseSbom, type SbomLimits } from "./sbom-parser.js";
import { buildxAttestationsOf, cosignSbomTags, sbomLayer } from "./sbom-recognition.js";

/** Default bound on an SBOM's bytes (`--sbom-max-mb`). */
export const DEFAULT_SBOM_MAX_BYTES = 64 * 1024 * 1024;
/** Default bound on an SBOM's packages. */
export const DEFAULT_SBOM_MAX_PACKAGES = 100_000;
/** Packages the parsed-SBOM cache holds at most, over all its entries. */
const CACHED_PACKAGES = 1_000_000;
/** Manifests whose recognition (SBOM layer or none) is remembered. */
const RECOGNITIONS = 10_000;

/** What the reader is built from. */
export interface SbomReaderDeps {
  store: Pick<Store, "manifests" | "tags">;
  /** `read(key)` of the blob store (`blobs/sha256/…`). */
  blobs: { read(key: string): Promise<Readable> };
  /** Bounds of one SBOM; defaults {@link DEFAULT_SBOM_MAX_BYTES}, {@link DEFAULT_SBOM_MAX_PACKAGES}. */
  limits?: Partial<SbomLimits>;
}

/** A manifest holding an SBOM. */
interface Candidate {
  referrer: string;
  layer: Descriptor;
  createTime: number;
}

/**
 * The SBOM reader over the registry's store and blobs. An image's SBOMs are the manifests of its repo
 * whose `subject` is the image (OCI 1.1 referrers), cosign's `sha256-<hex>.sbom` / `.att` tags, and
 * docker buildx's attestation manifests for it in the indexes that list it, recognised by
 * {@link sbomLayer} (the manifest only; remembered per manifest digest, since a digest's content
 * never changes). `hasSbom` never opens an SBOM. `sbom` parses the newest one (by push time, then digest) with
 * {@link parseSbom}; parsed SBOMs are cached per referrer digest (bounded by their packages in total),
 * and concurrent reads of one share a parse. A malformed or too large SBOM rejects with
 * {@link SbomFormatError} naming the referrer.
 */
export function createSbomReader(deps: SbomReaderDeps): SbomReader {
  const { store, blobs } = deps;
  const limits: SbomLimits = {
    maxBytes: deps.limits?.maxBytes ?? DEFAULT_SBOM_MAX_BYTES,
    maxPackages: deps.limits?.maxPackages ?? DEFAULT_SBOM_MAX_PACKAGES,
  };
  const recognised = new Map<string, { layer: Descriptor | undefined; createTime: number }>();
  const attestationsByIndex = new Map<string, Map<string, string[]>>();
  const parsed = new Map<string, ImageSbom>();
  const inFlight = new Map<string, Promise<ImageSbom>>();
  let cachedPackages = 0;

  /** The manifest's SBOM layer and push time, or undefined when it holds none (or is gone). */
  async function recognise(repoUid: string, digest: string): Promise<Candidate | undefined> {
    const key = `${repoUid}\n${digest}`;
    let known = recognised.get(key);
    if (known === undefined) {
      const row = await store.manifests.get(repoUid, digest);
      if (row === undefined) return undefined;
      let layer: Descriptor | undefined;
      try {
        layer = sbomLayer(parseManifest(row.content, row.mediaType));
      } catch {
        layer = undefined;
      }
      known = { layer, createTime: row.createTime };
      setBounded(recognised, key, known, RECOGNITIONS);
    }
    return known.layer === undefined
      ? undefined
      : { referrer: digest, layer: known.layer, createTime: known.createTime };
  }

  /**
   * docker buildx's attestation manifests of `digest`: entries of the indexes listing it that are
   * annotated as its attestation (remembered per index digest).
   */
  async function buildxAttestations(repoUid: string, digest: string): Promise<string[]> {
    const found: string[] = [];
    for (const index of await store.manifests.referencedBy(repoUid, digest)) {
      const key = `${repoUid}\n${index}`;
      let byImage = attestationsByIndex.get(key);
      if (byImage === undefined) {
        const row = await store.manifests.get(repoUid, index);
        byImage = new Map();
        try {
          if (row !== undefined) byImage = buildxAttestationsOf(parseManifest(row.content, row.mediaType));
        } catch {
          // Not a manifest this reader understands: it lists no attestation.
        }
        setBounded(attestationsByIndex, key, byImage, RECOGNITIONS);
      }
      found.push(...(byImage.get(digest) ?? []));
    }
    return found;
  }

  /** The manifests that may hold SBOMs of `digest`: its referrers, cosign's tags, buildx's attestations. */
  async function sources(repoUid: string, digest: string): Promise<string[]> {
    const [referrers, tagged, attestations] = await Promise.all([
      store.manifests.referrers(repoUid, digest),
      Promise.all(cosignSbomTags(digest).map((name) => store.tags.getByName(repoUid, name))),
      buildxAttestations(repoUid, digest),
    ]);
    const digests = referrers.map((r) => r.digest);
    for (const other of [...tagged.map((t) => t?.digest), ...attestations])
      if (other !== undefined && !digests.includes(other)) digests.push(other);
    return digests;
  }

  async function candidates(repoUid: string, digest: string): Promise<Candidate[]> {
    const found: Candidate[] = [];
    for (const source of await sources(repoUid, digest)) {
      const candidate = await recognise(repoUid, source);
      if (candidate !== undefined) found.push(candidate);
    }
    return found;
  }

  async function read(candidate: Candidate): Promise<ImageSbom> {
    const { layer, referrer } = candidate;
    if (layer.size > limits.maxBytes) {
      throw new SbomFormatError(
        `the SBOM of referrer ${referrer} is ${layer.size} bytes, larger than the limit of ${limits.maxBytes} bytes`,
      );
    }
    try {
      const source = (await blobs.read(blobKey(parseDigest(layer.digest)))) as AsyncIterable<Uint8Array>;
      const doc = await parseSbom(source, limits);
      return { format: doc.format, referrer, packages: doc.packages };
    } catch (err) {
      if (err instanceof SbomFormatError)
        throw new SbomFormatError(`the SBOM of referrer ${referrer}: ${err.message}`);
      throw err;
    }
  }

  function remember(sbom: ImageSbom): void {
    const size = Math.max(1, sbom.packages.length);
    if (size > CACHED_PACKAGES) return;
    parsed.delete(sbom.referrer);
    while (cachedPackages + size > CACHED_PACKAGES && parsed.size > 0) {
      const [oldest, value] = parsed.entries().next().value as [string, ImageSbom];
      parsed.delete(oldest);
      cachedPackages -= Math.max(1, value.packages.length);
    }
    parsed.set(sbom.referrer, sbom);
    cachedPackages += size;
  }

  async function parsedOnce(candidate: Candidate): Promise<ImageSbom> {
    const hit = parsed.get(candidate.referrer);
    if (hit !== undefined) {
      // Most recently used last.
      parsed.delete(candidate.referrer);
      parsed.set(candidate.referrer, hit);
      return hit;
    }
    let pending = inFlight.get(candidate.referrer);
    if (pending === undefined) {
      pending = read(candidate)
        .then((sbom) => {
          remember(sbom);
          return sbom;
        })
        .finally(() => inFlight.delete(candidate.referrer));
      inFlight.set(candidate.referrer, pending);
    }
    return pending;
  }

  return {
    async hasSbom(repoUid, digest) {
      for (const source of await sources(repoUid, digest)) {
        if ((await recognise(repoUid, source)) !== undefined) return true;
      }
      return false;
    },
    async sbom(repoUid, digest) {
      const found = await candidates(repoUid, digest);
      if (found.length === 0) return undefined;
      const newest = found.reduce((a, b) =>
        b.createTime > a.createTime || (b.createTime === a.createTime && b.referrer > a.referrer) ? b : a,
      );
      return parsedOnce(newest);
    },
  };
}
