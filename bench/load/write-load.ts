// A closed-loop write load (BENCH_MIX=write of bench/api.ts), run as its own process: each step is
// one cycle of three API writes on a new repo of <org>: create (POST), update (PATCH), delete
// (DELETE), each of which records its event and its audit record. Prints the closed-loop result
// as JSON, where a "request" is one cycle.
import { Agent, request } from "node:http";
import { runClosedLoop } from "./closed-loop.js";

const [apiUrl, org, concurrencyArg, secondsArg, token] = process.argv.slice(2);
if (!apiUrl || !org || !token)
  throw new Error("usage: write-load <api-url> <org> <concurrency> <seconds> <token>");
const concurrency = Number(concurrencyArg ?? 32);
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
const target = new URL(apiUrl);
let counter = 0;

function call(method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path,
        method,
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          ...(payload === undefined
            ? {}
            : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on("error", () => resolve({ status: 0, text: "" }));
    req.end(payload);
  });
}

const cycle = async (): Promise<boolean> => {
  const name = `w${process.pid}-${counter++}`;
  const created = await call("POST", `/registry/v2/repos/${org}`, { name });
  if (created.status !== 200) return false;
  const uid = (JSON.parse(created.text) as { uid: string }).uid;
  const path = `/registry/v2/repos/${uid}`;
  const updated = await call("PATCH", `${path}?update_mask=description`, { description: "bench" });
  const deleted = await call("DELETE", path);
  return updated.status === 200 && deleted.status === 200;
};

const result = await runClosedLoop(cycle, concurrency, Number(secondsArg ?? 5));
agent.destroy();
process.stdout.write(`${JSON.stringify(result)}\n`);
