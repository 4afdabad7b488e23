// A closed-loop unary gRPC load generator over one HTTP/2 connection, run as its own process.
// Prints {"requests": n, "seconds": s, "rps": r, "errors": e} as JSON.
//
// The default client is a minimal one on node:http2, the same weight class as the node:http client
// that measures REST and the bare baseline. @grpc/grpc-js (`grpc-js` as the last argument) costs
// so much CPU per call that on the 2-core bench machine it measured itself: against an HTTP/2
// server that does nothing it tops out at ~4,800 calls/s, half of what this client reaches.
// Either way a call only counts as a success when its response is one length-prefixed message
// followed by grpc-status 0.
import { connect } from "node:http2";
import { connect as netConnect } from "node:net";
import * as grpc from "@grpc/grpc-js";
import { runClosedLoop } from "./closed-loop.js";

const [address, path, requestBase64, concurrencyArg, secondsArg, token, clientArg] = process.argv.slice(2);
if (!address || !path || requestBase64 === undefined) {
  throw new Error(
    "usage: grpc-load <host:port> <path> <request-base64> <concurrency> <seconds> [token] [http2|grpc-js]",
  );
}
const message = Buffer.from(requestBase64, "base64");
const WINDOW = 16 * 1024 * 1024;
const client = clientArg === "grpc-js" ? grpcJsClient() : http2Client();
const result = await runClosedLoop(client.call, Number(concurrencyArg ?? 32), Number(secondsArg ?? 5));
client.close();
process.stdout.write(`${JSON.stringify(result)}\n`);

interface Client {
  call: () => Promise<boolean>;
  close: () => void;
}

function http2Client(): Client {
  // Flow-control windows as large as real gRPC clients grow theirs (BDP probing): with HTTP/2's
  // default 64 KiB per connection, 32 list responses in flight wait on WINDOW_UPDATE round trips.
  // No Nagle, as node:http's agent does for the REST client (and the server for its sockets).
  const colon = address!.lastIndexOf(":");
  const session = connect(`http://${address}`, {
    settings: { initialWindowSize: WINDOW },
    createConnection: () =>
      netConnect({ host: address!.slice(0, colon), port: Number(address!.slice(colon + 1)), noDelay: true }),
  });
  session.on("connect", () => session.setLocalWindowSize(WINDOW));
  session.on("error", () => {});
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  const headers = {
    ":method": "POST",
    ":path": path!,
    "content-type": "application/grpc",
    te: "trailers",
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  };
  const call = (): Promise<boolean> =>
    new Promise((resolve) => {
      if (session.closed || session.destroyed) {
        resolve(false);
        return;
      }
      const stream = session.request(headers);
      const chunks: Buffer[] = [];
      let status: unknown;
      stream.on("response", (h) => {
        status = h["grpc-status"]; // trailers-only responses carry it here
      });
      stream.on("trailers", (t) => {
        status = t["grpc-status"];
      });
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("error", () => {});
      stream.on("close", () => {
        const body = Buffer.concat(chunks);
        resolve(status === "0" && body.length >= 5 && body.readUInt32BE(1) === body.length - 5);
      });
      stream.end(frame);
    });
  return { call, close: () => session.close() };
}

function grpcJsClient(): Client {
  const c = new grpc.Client(address!, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  if (token) metadata.set("authorization", `Bearer ${token}`);
  const call = (): Promise<boolean> =>
    new Promise((resolve) => {
      c.makeUnaryRequest(
        path!,
        (b: Buffer) => b,
        (b: Buffer) => b,
        message,
        metadata,
        (err) => resolve(!err),
      );
    });
  return { call, close: () => c.close() };
}
