import { createHash } from "node:crypto";
import { type Readable, Transform } from "node:stream";
import type { Digest } from "../digest.js";
import { RemoteError } from "./remote-registry.js";
import { isTimeout } from "./remote-transport.js";

/**
 * `source` as a stream that yields exactly `size` bytes hashing to `digest`, else ends in an error:
 * RemoteError `truncated` when the bytes stop short (the source ended or broke first), or
 * `digest-mismatch` when they do not hash to the digest or run past `size`. Errors of the source
 * other than a short body become what `mapError` says. Destroying the result destroys the source.
 */
export function verifiedBody(
  source: Readable,
  expected: { digest: Digest; size: number },
  what: string,
  mapError: (err: unknown) => unknown,
): Readable {
  const hash = createHash(expected.digest.algorithm);
  let seen = 0;
  const truncated = () =>
    new RemoteError("truncated", `${what}: the body stopped after ${seen} of ${expected.size} bytes`);
  const out = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > expected.size) {
        callback(
          new RemoteError(
            "digest-mismatch",
            `${what}: the body runs past the ${expected.size} bytes announced`,
          ),
        );
        return;
      }
      hash.update(chunk);
      callback(null, chunk);
    },
    flush(callback) {
      if (seen < expected.size) return callback(truncated());
      const got = hash.digest("hex");
      if (got !== expected.digest.hex) {
        return callback(
          new RemoteError(
            "digest-mismatch",
            `${what}: the bytes hash to ${expected.digest.algorithm}:${got}, not ${expected.digest.value}`,
          ),
        );
      }
      callback();
    },
  });
  source.on("error", (err) => {
    const mapped = mapError(err);
    // A short body is `truncated` unless the caller gave up (its abort reason) or the remote stalled.
    const short = seen < expected.size && mapped instanceof RemoteError && !isTimeout(err);
    out.destroy((short ? truncated() : mapped) as Error);
  });
  out.on("close", () => {
    if (!source.destroyed) source.destroy();
  });
  source.pipe(out);
  return out;
}
