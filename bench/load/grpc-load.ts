// A closed-loop gRPC load generator using @grpc/grpc-js over one HTTP/2 connection, run as its own
// process. Prints {"requests": n, "seconds": s, "rps": r, "errors": e} as JSON.
import * as grpc from "@grpc/grpc-js";
import { runClosedLoop } from "./closed-loop.js";

const [address, path, requestBase64, concurrencyArg, secondsArg, token] = process.argv.slice(2);
if (!address || !path || requestBase64 === undefined) {
  throw new Error("usage: grpc-load <host:port> <path> <request-base64> <concurrency> <seconds> [token]");
}
const body = Buffer.from(requestBase64, "base64");
const client = new grpc.Client(address, grpc.credentials.createInsecure());
const metadata = new grpc.Metadata();
if (token) metadata.set("authorization", `Bearer ${token}`);

const one = (): Promise<boolean> =>
  new Promise((resolve) => {
    client.makeUnaryRequest(
      path,
      (b: Buffer) => b,
      (b: Buffer) => b,
      body,
      metadata,
      (err) => resolve(!err),
    );
  });

const result = await runClosedLoop(one, Number(concurrencyArg ?? 32), Number(secondsArg ?? 5));
client.close();
process.stdout.write(`${JSON.stringify(result)}\n`);
