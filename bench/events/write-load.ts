// A closed-loop load generator of tag creates for `bench:events`, run as its own process (as
// bench/load/http-load.ts is for `bench:api`): `concurrency` workers POST
// `/registry/v2/tags/<repo>` with a new tag name `<prefix>-<n>` each (n from `first` on), one second
// of warm-up, then `seconds` measured. Prints the LoadResult of closed-loop.ts plus the mean and
// p99 latency of the measured requests and `created`, how many tags (hence events) it created in
// all. Usage: write-load <api-url> <repo-uid> <digest> <token> <concurrency> <seconds> <prefix> <first>
import { Agent, request } from "node:http";
import { runClosedLoop } from "../load/closed-loop.js";

const [apiUrl, repo, digest, token, concurrencyArg, secondsArg, prefix, firstArg] = process.argv.slice(2);
if (!apiUrl || !repo || !digest || !token || !prefix) {
  throw new Error(
    "usage: write-load <api-url> <repo-uid> <digest> <token> <concurrency> <seconds> <prefix> <first>",
  );
}
const concurrency = Number(concurrencyArg ?? 32);
const target = new URL(`/registry/v2/tags/${repo}`, apiUrl);
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
let next = Number(firstArg ?? 0);
let created = 0;
let firstError = "";
// The measured window starts once every warm-up request has ended; none starts after `warmUntil`.
const warmUntil = Date.now() + 1000;
const latencies: number[] = [];

const one = (): Promise<boolean> =>
  new Promise((resolve) => {
    const started = performance.now();
    const measured = Date.now() >= warmUntil;
    const body = JSON.stringify({ name: `${prefix}-${next++}`, digest });
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const ok = res.statusCode === 200;
          if (ok) created++;
          else if (firstError === "") firstError = `${res.statusCode} ${Buffer.concat(chunks).toString()}`;
          if (measured) latencies.push(performance.now() - started);
          resolve(ok);
        });
      },
    );
    req.on("error", (err) => {
      if (firstError === "") firstError = String(err);
      resolve(false);
    });
    req.end(body);
  });

const result = await runClosedLoop(one, concurrency, Number(secondsArg ?? 10));
agent.destroy();
latencies.sort((a, b) => a - b);
const meanLatencyMs = latencies.reduce((sum, l) => sum + l, 0) / Math.max(1, latencies.length);
const p99LatencyMs = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? 0;
process.stdout.write(`${JSON.stringify({ ...result, meanLatencyMs, p99LatencyMs, created, firstError })}\n`);
