// A closed-loop gRPC load generator using @grpc/grpc-js over one HTTP/2 connection, run as its own
// process. Prints {"requests": n, "seconds": s, "rps": r, "errors": e} as JSON.
import * as grpc from "@grpc/grpc-js";

const [address, path, requestBase64, concurrencyArg, secondsArg, token] = process.argv.slice(2);
if (!address || !path || requestBase64 === undefined) {
  throw new Error("usage: grpc-load <host:port> <path> <request-base64> <concurrency> <seconds> [token]");
}
const concurrency = Number(concurrencyArg ?? 32);
const seconds = Number(secondsArg ?? 5);
const body = Buffer.from(requestBase64, "base64");
const client = new grpc.Client(address, grpc.credentials.createInsecure());
const metadata = new grpc.Metadata();
if (token) metadata.set("authorization", `Bearer ${token}`);

let requests = 0;
let errors = 0;
let running = true;

function one(): Promise<void> {
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      path!,
      (b: Buffer) => b,
      (b: Buffer) => b,
      body,
      metadata,
      (err) => {
        if (err) errors++;
        requests++;
        resolve();
      },
    );
  });
}

async function worker(): Promise<void> {
  while (running) await one();
}

const warm = Date.now() + 1000;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (Date.now() < warm) await one();
  }),
);
requests = 0;
errors = 0;
const start = process.hrtime.bigint();
setTimeout(() => {
  running = false;
}, seconds * 1000);
await Promise.all(Array.from({ length: concurrency }, worker));
const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
client.close();
process.stdout.write(`${JSON.stringify({ requests, seconds: elapsed, rps: requests / elapsed, errors })}\n`);
