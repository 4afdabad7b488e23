// The upload hasher's thread (started by registry/data-plane/upload-hasher.ts): one running hash per digest id,
// fed with ranges of the shared rings the serving thread copies upload bytes into.
import { createHash, type Hash } from "node:crypto";
import { parentPort } from "node:worker_threads";
import type { FromHashWorker, ToHashWorker } from "../registry/data-plane/upload-hasher.js";

const port = parentPort;
if (!port)
  throw new Error("workers/upload-hash runs as a worker thread (see registry/data-plane/upload-hasher.ts)");
const post = (message: FromHashWorker) => port.postMessage(message);
const hashes = new Map<number, Hash>();

port.on("message", (m: ToHashWorker) => {
  if (m.type === "open") hashes.set(m.id, createHash(m.algorithm));
  else if (m.type === "update") {
    hashes.get(m.id)?.update(new Uint8Array(m.ring, m.start, m.length));
    post({ type: "done", id: m.id, length: m.length });
  } else if (m.type === "digest") {
    const hash = hashes.get(m.id);
    hashes.delete(m.id);
    post({ type: "digest", id: m.id, hex: hash ? hash.digest("hex") : null });
  } else hashes.delete(m.id);
});
