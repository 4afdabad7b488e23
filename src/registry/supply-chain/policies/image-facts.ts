import type { Store } from "../../../storage/store.js";
import { eolStateAt } from "../../eol/eol-status.js";
import { resolveTagEol } from "../../eol/tag-eol-resolver.js";
import type { ImageVulnerabilities, SbomReader, SignatureVerifier, TrustedKeyring } from "../supply-chain.js";
import { type ImageFacts, type InactiveTag, signedByTrustedKey } from "./policy-rules.js";

/** The providers the facts come from (the contracts of supply-chain.ts, and the store's EOL data). */
export interface FactSources {
  store: Pick<Store, "tags" | "manifests" | "eol">;
  keyring: TrustedKeyring;
  signatures: SignatureVerifier;
  vulnerabilities: ImageVulnerabilities;
  sboms: SbomReader;
  /** Grace after a cycle's EOL date, in calendar months (`--eol-grace-months`). */
  eolGraceMonths: number;
}

/** The image the facts are about. */
export interface ImageRef {
  repoUid: string;
  /** The repository path (`acme/prod/api`). */
  repository: string;
  digest: string;
  /** The tag pulled; undefined for a pull by digest. */
  tag?: string | undefined;
}

/**
 * Gathers the `needed` facts of `image` at `now`, each once. A platform manifest is pulled after
 * its index (what podman and docker do), and signatures, SBOMs and reports are usually attached to
 * the index: so where the image itself has no verified signature, no SBOM, or no report at all,
 * the indexes of the repo listing it stand in (ADR 0058). By digest, the EOL rule reads every tag
 * naming the image or one of those indexes; by tag, that tag alone.
 */
export async function gatherFacts(
  sources: FactSources,
  image: ImageRef,
  needed: ReadonlySet<keyof ImageFacts>,
  now: number,
): Promise<ImageFacts> {
  const repo = { uid: image.repoUid, name: image.repository };
  let indexes: Promise<string[]> | undefined;
  const indexesOf = () => {
    indexes ??= sources.store.manifests.indexesOf(image.repoUid, image.digest);
    return indexes;
  };
  const facts: ImageFacts = {};
  const work: Promise<void>[] = [];

  if (needed.has("signatures")) {
    work.push(
      (async () => {
        const own = await sources.signatures.signatures(repo, image.digest);
        if (own.some(signedByTrustedKey)) {
          facts.signatures = own;
          return;
        }
        const all = [...own];
        for (const index of await indexesOf()) {
          const theirs = await sources.signatures.signatures(repo, index);
          all.push(...theirs);
          if (theirs.some(signedByTrustedKey)) break;
        }
        facts.signatures = all;
      })(),
    );
  }
  if (needed.has("keys")) {
    work.push(
      (async () => {
        facts.keys = await sources.keyring.keysFor(image.repoUid);
      })(),
    );
  }
  if (needed.has("findings")) {
    work.push(
      (async () => {
        const own = await sources.vulnerabilities.unsuppressedFindings(image.repoUid, image.digest);
        if (own !== undefined) {
          facts.findings = own;
          return;
        }
        for (const index of await indexesOf()) {
          const theirs = await sources.vulnerabilities.unsuppressedFindings(image.repoUid, index);
          if (theirs !== undefined) {
            facts.findings = theirs;
            return;
          }
        }
        facts.findings = null;
      })(),
    );
  }
  if (needed.has("hasSbom")) {
    work.push(
      (async () => {
        if (await sources.sboms.hasSbom(image.repoUid, image.digest)) {
          facts.hasSbom = true;
          return;
        }
        for (const index of await indexesOf()) {
          if (await sources.sboms.hasSbom(image.repoUid, index)) {
            facts.hasSbom = true;
            return;
          }
        }
        facts.hasSbom = false;
      })(),
    );
  }
  if (needed.has("inactiveTags")) {
    work.push(
      (async () => {
        facts.inactiveTags = await inactiveTags(sources, image, indexesOf, now);
      })(),
    );
  }
  await Promise.all(work);
  return facts;
}

async function inactiveTags(
  sources: FactSources,
  image: ImageRef,
  indexesOf: () => Promise<string[]>,
  now: number,
): Promise<InactiveTag[]> {
  const { store } = sources;
  let tags: Awaited<ReturnType<typeof store.tags.ofDigest>>;
  if (image.tag !== undefined) {
    const row = await store.tags.getByName(image.repoUid, image.tag);
    tags = row ? [row] : [];
  } else {
    tags = await store.tags.ofDigest(image.repoUid, image.digest);
    for (const index of await indexesOf()) tags.push(...(await store.tags.ofDigest(image.repoUid, index)));
  }
  if (tags.length === 0) return [];
  const eol = await resolveTagEol(store, tags);
  const out: InactiveTag[] = [];
  for (const tag of tags) {
    const found = eol.get(tag.uid);
    if (found === undefined) continue;
    const state = eolStateAt(found.cycle, now, sources.eolGraceMonths);
    if (state.tagStatus !== "INACTIVE") continue;
    out.push({
      tag: tag.name,
      product: found.rule.product,
      ...(found.cycle ? { cycle: found.cycle } : {}),
      ...(state.gracePeriodExpiryDate === undefined ? {} : { graceEnd: state.gracePeriodExpiryDate }),
    });
  }
  return out;
}
