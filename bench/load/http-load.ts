// A small closed-loop HTTP/1.1 load generator, run as its own process so it does not share the
// server's event loop. Prints {"requests": n, "seconds": s, "rps": r, "errors": e} as JSON.
import { Agent, request } from "node:http";
import { runClosedLoop } from "./closed-loop.js";

const [url, concurrencyArg, secondsArg, headersJson] = process.argv.slice(2);
if (!url) throw new Error("usage: http-load <url> <concurrency> <seconds> [headers-json]");
const concurrency = Number(concurrencyArg ?? 32);
const headers = headersJson ? (JSON.parse(headersJson) as Record<string, string>) : {};
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
const target = new URL(url);

const one = (): Promise<boolean> =>
  new Promise((resolve) => {
    const req = request(
      { host: target.hostname, port: target.port, path: target.pathname + target.search, agent, headers },
      (res) => {
        res.on("data", () => {});
        res.on("end", () => resolve(res.statusCode === 200));
      },
    );
    req.on("error", () => resolve(false));
    req.end();
  });

const result = await runClosedLoop(one, concurrency, Number(secondsArg ?? 5));
agent.destroy();
process.stdout.write(`${JSON.stringify(result)}\n`);
