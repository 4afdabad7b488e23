import type { Readable } from "node:stream";
import { RemoteError, type RemoteRegistry } from "../remote/remote-registry.js";
import { keepReferrersTag } from "./referrers-fallback.js";
import type { ReplicationEndpoint } from "./replication-endpoint.js";

/** `undefined` for a remote `not-found` answer; any other failure is rethrown. */
async function unlessMissing<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof RemoteError && err.kind === "not-found") return undefined;
    throw err;
  }
}

/**
 * A remote registry as a replication endpoint: each operation is one call of the remote client
 * (which checks the address policy, verifies digests and caps sizes). A remote that answers a
 * different digest for a manifest it stored, or a blob of another size than the manifest
 * declares, is an `invalid-response` RemoteError.
 */
export function remoteEndpoint(remote: RemoteRegistry): ReplicationEndpoint {
  return {
    label: remote.url,
    tagDigest: async (repo, tag, signal) =>
      (await unlessMissing(remote.headManifest(repo, tag, signal)))?.digest,
    manifest: (repo, reference, signal) => unlessMissing(remote.getManifest(repo, reference, signal)),
    hasManifest: async (repo, digest, signal) =>
      (await unlessMissing(remote.headManifest(repo, digest, signal))) !== undefined,
    hasBlob: (repo, digest, signal) => remote.hasBlob(repo, digest, signal),

    async openBlob(repo, digest, size, signal): Promise<Readable> {
      const blob = await remote.getBlob(repo, digest, signal);
      if (blob.size !== size) {
        blob.body.destroy();
        throw new RemoteError(
          "invalid-response",
          `${remote.url}: blob ${digest} of ${repo} is ${blob.size} bytes, the manifest says ${size}`,
        );
      }
      return blob.body;
    },

    putBlob: (repo, digest, size, body, signal) => remote.pushBlob(repo, digest, size, body, signal),
    mountBlob: (repo, digest, fromRepo, signal) => remote.mountBlob(repo, digest, fromRepo, signal),

    async putManifest(repo, reference, manifest, signal) {
      const stored = await remote.putManifest(repo, reference, manifest.mediaType, manifest.content, signal);
      if (stored !== "" && stored !== manifest.digest) {
        throw new RemoteError(
          "invalid-response",
          `${remote.url}: stored manifest ${manifest.digest} of ${repo} as ${stored}`,
        );
      }
    },

    referrers: (repo, digest, signal) => remote.referrers(repo, digest, signal),
    referrerStored: (repo, subject, referrer, signal) =>
      keepReferrersTag(remote, repo, subject, referrer, signal),
    tags: (repo, signal) => remote.tags(repo, signal),
  };
}
