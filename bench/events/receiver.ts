// The webhook receiver of `bench:events`, in its own process so that it neither shares Wharf's event
// loop nor the producer's: a plain node:http server on loopback that reads each body and answers
// 200 "ok", and counts what arrived. Usage: receiver (no arguments). Prints one JSON line on stdout,
// {"pid", "url"}, and stops when stdin closes (the parent died) or on SIGTERM.
//
// Sinks are `<url>/hook/<k>/<i>`: sink i of a group of k sinks. Only deliveries of tag events whose
// tag is named `<phase>-<n>` are counted, per phase: deliveries, duplicates (the same ce-id at the
// same sink again: at-least-once re-sends), and the events delivered to all k sinks, with the time
// each one completed. `GET /stats` answers {<phase>: {deliveries, duplicates, complete,
// lastCompleteAt}}; `GET /times?phase=<phase>` answers {<n>: <ms since the epoch it completed>}.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { stopWhenAsked } from "../registry/stop-when-asked.js";

interface Phase {
  deliveries: number;
  duplicates: number;
  complete: number;
  lastCompleteAt: number;
  /** Sinks each event reached so far. */
  reached: Map<string, number>;
  /** `<path> <ce-id>` of every delivery, to spot re-sends. */
  seen: Set<string>;
  /** n → when the event reached its last sink. */
  times: Map<number, number>;
}

const phases = new Map<string, Phase>();
const TAG_NAME = /"name":"([a-z]+)-(\d+)"/;
const SINK_PATH = /^\/hook\/(\d+)\/\d+$/;

function phaseOf(name: string): Phase {
  let phase = phases.get(name);
  if (!phase) {
    phase = {
      deliveries: 0,
      duplicates: 0,
      complete: 0,
      lastCompleteAt: 0,
      reached: new Map(),
      seen: new Set(),
      times: new Map(),
    };
    phases.set(name, phase);
  }
  return phase;
}

function count(path: string, ceId: string, ceType: string, body: string): void {
  const sinks = SINK_PATH.exec(path);
  if (!sinks || !ceType.startsWith("dev.wharf.api.registry.tag.")) return;
  const tag = TAG_NAME.exec(body);
  if (!tag) return;
  const phase = phaseOf(tag[1] as string);
  phase.deliveries++;
  const key = `${path} ${ceId}`;
  if (phase.seen.has(key)) {
    phase.duplicates++;
    return;
  }
  phase.seen.add(key);
  const reached = (phase.reached.get(ceId) ?? 0) + 1;
  phase.reached.set(ceId, reached);
  if (reached === Number(sinks[1])) {
    const now = Date.now();
    phase.complete++;
    phase.lastCompleteAt = now;
    phase.times.set(Number(tag[2]), now);
  }
}

const server = createServer((req, res) => {
  const url = req.url ?? "/";
  if (req.method === "GET") {
    const parsed = new URL(url, "http://receiver");
    let answer: unknown;
    if (parsed.pathname === "/stats") {
      answer = Object.fromEntries(
        [...phases].map(([name, p]) => [
          name,
          {
            deliveries: p.deliveries,
            duplicates: p.duplicates,
            complete: p.complete,
            lastCompleteAt: p.lastCompleteAt,
          },
        ]),
      );
    } else if (parsed.pathname === "/times") {
      answer = Object.fromEntries(phases.get(parsed.searchParams.get("phase") ?? "")?.times ?? []);
    }
    const body = JSON.stringify(answer ?? null);
    res.writeHead(answer === undefined ? 404 : 200, { "content-type": "application/json" }).end(body);
    return;
  }
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    count(
      url,
      String(req.headers["ce-id"] ?? ""),
      String(req.headers["ce-type"] ?? ""),
      Buffer.concat(chunks).toString("utf8"),
    );
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
  });
});
// Deliveries come over keep-alive connections; keep them open as long as the sender wants.
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

const stop = () => {
  server.closeAllConnections();
  server.close();
  process.exit(0);
};
stopWhenAsked(stop);

const { port } = server.address() as AddressInfo;
process.stdout.write(`${JSON.stringify({ pid: process.pid, url: `http://127.0.0.1:${port}` })}\n`);
