import type { LibraryEcosystemName, PutOutcome } from "../storage/library-store.js";
import type { Store } from "../storage/store.js";
import { artifactUid, versionUid } from "./library-ids.js";
import type { LibraryVersionRecord } from "./library-record.js";
import { compareVersions, cudaVersionOf } from "./version-order.js";

/** What `storeLibraryVersions` reports per record. */
export interface LibraryImportSink {
  count(outcome: PutOutcome): void;
  advance(n?: number): void;
}

/**
 * Stores `records` (upserts keyed by ecosystem, name and version; see `LibraryStore.putVersion`)
 * and then re-aggregates every artifact they touched (`refreshArtifact`). Run it inside one
 * transaction: the artifacts are consistent with their versions only at its end.
 */
export async function storeLibraryVersions(
  store: Pick<Store, "libraries">,
  records: readonly LibraryVersionRecord[],
  sink: LibraryImportSink,
): Promise<void> {
  const touched = new Map<string, LibraryEcosystemName>();
  for (const record of records) {
    const uid = artifactUid(record.ecosystem, record.name);
    if (!touched.has(uid)) {
      touched.set(uid, record.ecosystem);
      if ((await store.libraries.getArtifact(uid)) === undefined) {
        // A placeholder the versions can reference; refreshArtifact fills it in below.
        await store.libraries.putArtifact({
          uid,
          ecosystem: record.ecosystem,
          name: record.name,
          description: "",
          latestVersion: "",
          versionCount: 0,
          remediatedCount: 0,
          createTime: record.publishTime,
          updateTime: record.publishTime,
        });
      }
    }
    const outcome = await store.libraries.putVersion({
      uid: versionUid(uid, record.version),
      artifactUid: uid,
      version: record.version,
      description: record.description,
      publishTime: record.publishTime,
      sizeBytes: record.sizeBytes,
      remediated: record.remediated,
      cudaVersion: cudaVersionOf(record.ecosystem, record.version),
      rank: 0,
    });
    sink.count(outcome);
    sink.advance();
  }
  for (const [uid, ecosystem] of touched) await refreshArtifact(store, uid, ecosystem);
}

/**
 * Recomputes an artifact from its versions: ranks in the ecosystem's version order (0 = oldest;
 * only changed ranks are written), latestVersion and its description, versionCount,
 * remediatedCount, createTime = first publish, updateTime = latest publish.
 */
export async function refreshArtifact(
  store: Pick<Store, "libraries">,
  uid: string,
  ecosystem: LibraryEcosystemName,
): Promise<void> {
  const artifact = await store.libraries.getArtifact(uid);
  if (artifact === undefined) return;
  const versions = await store.libraries.versionsOf(uid);
  versions.sort((a, b) => compareVersions(ecosystem, a.version, b.version));
  const changed = versions.flatMap((v, rank) => (v.rank === rank ? [] : [{ uid: v.uid, rank }]));
  await store.libraries.setVersionRanks(changed);
  const latest = versions[versions.length - 1];
  const first = versions.reduce((min, v) => Math.min(min, v.publishTime), Number.POSITIVE_INFINITY);
  const last = versions.reduce((max, v) => Math.max(max, v.publishTime), Number.NEGATIVE_INFINITY);
  await store.libraries.putArtifact({
    ...artifact,
    description: latest?.description ?? "",
    latestVersion: latest?.version ?? "",
    versionCount: versions.length,
    remediatedCount: versions.filter((v) => v.remediated).length,
    createTime: latest ? first : artifact.createTime,
    updateTime: latest ? last : artifact.updateTime,
  });
}
