import type { Readable, Writable } from "node:stream";

/**
 * Copies `source` (an upstream blob that fails at its end when its bytes are wrong) into `store`
 * and, while it stays connected, into the client's answer, then ends both. `openClient` is called
 * when the first byte is due to the client (so a failure before that leaves the answer untouched,
 * for the caller to answer an error). The client's last chunk is held back until `source` has
 * ended cleanly, so a client whose answer announced the blob's length never receives a complete
 * wrong blob: on a failure the store side is destroyed with the error (nothing is stored) and an
 * opened answer is aborted. A client that disconnects is dropped and the store write goes on. A
 * slow client slows the copy (bounded memory). Never rejects.
 */
export async function teeBlob(
  source: Readable,
  store: Writable,
  openClient: (() => Writable) | undefined,
): Promise<void> {
  const client: { stream?: Writable; open: boolean } = { open: openClient !== undefined };
  const clientWrite = async (chunk: Buffer | undefined) => {
    if (!openClient || !client.open) return;
    client.stream ??= openClient();
    if (client.stream.destroyed) client.open = false;
    else if (chunk !== undefined && !(await written(client.stream, chunk))) client.open = false;
  };
  let held: Buffer | undefined;
  try {
    for await (const chunk of source) {
      const storing = written(store, chunk as Buffer);
      const sending = held === undefined ? undefined : clientWrite(held);
      held = chunk as Buffer;
      if (!(await storing)) throw new Error("the blob store stopped reading");
      await sending;
    }
    await clientWrite(held);
    if (client.stream && client.open) client.stream.end();
    store.end();
  } catch (err) {
    store.destroy(err instanceof Error ? err : new Error(String(err)));
    client.stream?.destroy();
    source.destroy();
  }
}

/** Writes `chunk`, waiting for `drain` when asked to; false when the stream closed instead. */
function written(stream: Writable, chunk: Buffer): Promise<boolean> {
  if (stream.destroyed || stream.writableEnded) return Promise.resolve(false);
  if (stream.write(chunk)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      stream.off("drain", onDrain);
      stream.off("close", onClose);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    stream.on("drain", onDrain);
    stream.on("close", onClose);
  });
}
