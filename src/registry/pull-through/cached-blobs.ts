import { PassThrough, type Writable } from "node:stream";
import { InvalidDigestError } from "../content-errors.js";
import type { BlobUploads } from "../data-plane/blob-uploads.js";
import type { RepoResolver } from "../data-plane/repo-resolver.js";
import type { Digest } from "../digest.js";
import { RemoteError } from "../remote/remote-registry.js";
import { teeBlob } from "./blob-tee.js";
import { type CachedPull, cachedRepo } from "./pull-context.js";
import { createSingleFlight } from "./single-flight.js";
import type { UpstreamClients } from "./upstream-clients.js";
import { UpstreamError, upstreamErrorOf } from "./upstream-error.js";

/**
 * Where the edge wants a fetched blob streamed: called when the first byte is due to the client
 * (so an upstream failure before that can still be answered as an error), it sends the answer's
 * headers for a blob of `size` bytes and returns the body to write into.
 */
export type BlobAnswer = (size: number) => Writable;

/** How a blob miss ended: streamed to the caller's answer, or now linked to `repoUid` (serve it from there). */
export type BlobOutcome = { sent: true } | { sent: false; repoUid: string };

/** The blob half of the pull-through cache. */
export interface CachedBlobs {
  /**
   * Fetches blob `digest` of `pull` from the upstream, stores it (verified before it is linked;
   * a mismatch or truncation stores nothing) and links it to the pull's repo (created when missing).
   * With `answer`, the bytes are streamed to it while they are stored. Concurrent misses of the
   * same (upstream, digest) make one fetch: the others wait for it and are then served locally
   * (linked into their repo when another repo fetched it). An upstream failure is an UpstreamError.
   */
  fetch(pull: CachedPull, digest: Digest, answer?: BlobAnswer): Promise<BlobOutcome>;
}

/** Creates the blob half of the cache. */
export function createCachedBlobs(deps: {
  uploads: BlobUploads;
  resolver: RepoResolver;
  clients: UpstreamClients;
}): CachedBlobs {
  const flights = createSingleFlight<{ repoUid: string; sent: boolean }>();

  async function fetchBlob(
    pull: CachedPull,
    repoUid: string,
    digest: Digest,
    answer: BlobAnswer | undefined,
  ): Promise<{ repoUid: string; sent: boolean }> {
    const { upstream, path } = pull.target;
    const remote = deps.clients.clientFor(upstream);
    let blob: Awaited<ReturnType<typeof remote.getBlob>>;
    try {
      blob = await remote.getBlob(path, digest.value);
    } catch (err) {
      throw upstreamErrorOf(upstream, "blob", err);
    }
    const storeSide = new PassThrough({ highWaterMark: 1 << 20 });
    const opened: { client?: Writable } = {};
    const openClient = answer && (() => (opened.client = answer(blob.size)));
    void teeBlob(blob.body, storeSide, openClient);
    try {
      const identity = pull.principal?.identityUid ?? "";
      await deps.uploads.putMonolithic(repoUid, digest, storeSide, blob.size, identity);
    } catch (err) {
      blob.body.destroy();
      opened.client?.destroy();
      if (err instanceof RemoteError) throw upstreamErrorOf(upstream, "blob", err);
      if (err instanceof InvalidDigestError) {
        throw new UpstreamError(
          "failed",
          "blob",
          `upstream ${upstream.orgName}/${upstream.name} (${upstream.url}) sent blob ${digest.value} of ${path} with other content: ${err.message}`,
        );
      }
      throw err;
    }
    return { repoUid, sent: opened.client !== undefined };
  }

  return {
    async fetch(pull, digest, answer) {
      const repo = await cachedRepo(deps.resolver, pull);
      const key = `${pull.target.upstream.uid}\n${digest.value}`;
      const flight = flights.run(key, () => fetchBlob(pull, repo.uid, digest, answer));
      const done = await flight.promise;
      if (flight.leader && done.sent) return { sent: true };
      if (done.repoUid !== repo.uid) await deps.uploads.mount(done.repoUid, repo.uid, digest.value);
      return { sent: false, repoUid: repo.uid };
    },
  };
}
