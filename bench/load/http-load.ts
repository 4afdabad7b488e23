// A small closed-loop HTTP/1.1 load generator, run as its own process so it does not share the
// server's event loop. Prints {"requests": n, "seconds": s, "rps": r, "errors": e} as JSON.
import { Agent, request } from "node:http";

const [url, concurrencyArg, secondsArg, headersJson] = process.argv.slice(2);
if (!url) throw new Error("usage: http-load <url> <concurrency> <seconds> [headers-json]");
const concurrency = Number(concurrencyArg ?? 32);
const seconds = Number(secondsArg ?? 5);
const headers = headersJson ? (JSON.parse(headersJson) as Record<string, string>) : {};
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
const target = new URL(url);

let requests = 0;
let errors = 0;
let running = true;

function one(): Promise<void> {
  return new Promise((resolve) => {
    const req = request(
      { host: target.hostname, port: target.port, path: target.pathname + target.search, agent, headers },
      (res) => {
        if (res.statusCode !== 200) errors++;
        res.on("data", () => {});
        res.on("end", () => {
          requests++;
          resolve();
        });
      },
    );
    req.on("error", () => {
      errors++;
      resolve();
    });
    req.end();
  });
}

async function worker(): Promise<void> {
  while (running) await one();
}

// Warm up, then measure.
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
agent.destroy();
process.stdout.write(`${JSON.stringify({ requests, seconds: elapsed, rps: requests / elapsed, errors })}\n`);
