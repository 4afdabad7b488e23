import { RemoteError, type RemoteRegistry } from "../remote/remote-registry.js";

/** A remote registry that tells whether it has answered anything yet. */
export interface WatchedRemote {
  remote: RemoteRegistry;
  /** True once any call got an answer from the remote (a success, or a 404). */
  answered(): boolean;
}

/**
 * Wraps `remote` to notice its first answer: a refusal before it (bad credentials, a policy-refused
 * address) refuses the whole rule, one after it refuses only what was asked.
 */
export function watchRemote(remote: RemoteRegistry): WatchedRemote {
  let answered = false;
  const seen = <T>(call: Promise<T>): Promise<T> =>
    call.then(
      (value) => {
        answered = true;
        return value;
      },
      (err: unknown) => {
        if (err instanceof RemoteError && err.kind === "not-found") answered = true;
        throw err;
      },
    );
  async function* seenAll(items: AsyncIterable<string>): AsyncGenerator<string> {
    try {
      for await (const item of items) {
        answered = true;
        yield item;
      }
      answered = true;
    } catch (err) {
      if (err instanceof RemoteError && err.kind === "not-found") answered = true;
      throw err;
    }
  }
  return {
    answered: () => answered,
    remote: {
      url: remote.url,
      getManifest: (...a) => seen(remote.getManifest(...a)),
      headManifest: (...a) => seen(remote.headManifest(...a)),
      getBlob: (...a) => seen(remote.getBlob(...a)),
      hasBlob: (...a) => seen(remote.hasBlob(...a)),
      mountBlob: (...a) => seen(remote.mountBlob(...a)),
      pushBlob: (...a) => seen(remote.pushBlob(...a)),
      putManifest: (...a) => seen(remote.putManifest(...a)),
      tags: (...a) => seenAll(remote.tags(...a)),
      catalog: (...a) => seenAll(remote.catalog(...a)),
      referrers: (...a) => seen(remote.referrers(...a)),
      close: () => remote.close(),
    },
  };
}
