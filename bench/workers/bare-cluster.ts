// The bare baseline of the workers dimension: N node:cluster workers answering one constant JSON
// body on a shared loopback port, the way `wharf serve --workers N` shares its ports (the primary
// accepts and hands connections out round-robin). What this machine gives N plain Node processes
// under the same wrk load. Usage: bare-cluster <workers> [body-json]. Prints {"pid", "url"} on
// stdout once every worker listens; stops on SIGTERM/SIGINT or when stdin closes.
import cluster from "node:cluster";
import { createServer } from "node:http";
import { stopWhenAsked } from "../registry/stop-when-asked.js";

const [workersArg, bodyArg] = process.argv.slice(2);
const workers = Number(workersArg);
if (!(workers >= 1)) throw new Error("usage: bare-cluster <workers> [body-json]");

if (cluster.isPrimary) {
  let listening = 0;
  for (let i = 0; i < workers; i++) cluster.fork();
  cluster.on("listening", (_worker, address) => {
    if (++listening === workers) {
      process.stdout.write(
        `${JSON.stringify({ pid: process.pid, url: `http://127.0.0.1:${address.port}/` })}\n`,
      );
    }
  });
  stopWhenAsked(() => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill();
    process.exit(0);
  });
} else {
  const body = bodyArg ?? JSON.stringify({ name: "a benchmark repository", uid: "0".repeat(26) });
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  });
  // Port 0 in a worker: the primary picks one free port and every worker shares it.
  server.listen(0, "127.0.0.1");
}
