import type { Store } from "../../src/storage/store.js";

const EMPTY_DIGEST = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";

/**
 * Stores placeholder manifests with the given digests in a repo, straight through the store, so
 * API tests can point tags at them without pushing images. The content is a valid, empty OCI
 * artifact manifest, but its digest is not the one it is stored under.
 */
export async function seedManifests(
  store: Store,
  repoUid: string,
  digests: readonly string[],
): Promise<void> {
  for (const digest of digests) {
    await store.manifests.put(
      {
        repoUid,
        digest,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        content: Buffer.from(
          JSON.stringify({
            schemaVersion: 2,
            mediaType: "application/vnd.oci.image.manifest.v1+json",
            config: { mediaType: "application/vnd.oci.empty.v1+json", digest: EMPTY_DIGEST, size: 2 },
            layers: [],
            annotations: { "dev.wharf.test.placeholder": digest },
          }),
        ),
        createTime: Date.now(),
      },
      [],
    );
  }
}
