#!/usr/bin/env node
// One `bench:cli` sample: `wharf serve` (the bin/wharf.js given) on an empty data dir and free
// loopback ports, from spawn until GET /ping/v2/ping answers 200; then kills it and removes the
// data dir. Plain JavaScript, so this wrapper adds only a bare node start to the figure.
// Usage: serve-until-ping.mjs <path to bin/wharf.js>
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { get } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const wharf = process.argv[2];
if (!wharf) throw new Error("usage: serve-until-ping.mjs <bin/wharf.js>");

/** A loopback port free when asked. */
const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/** Resolves with the status of GET `url`, or 0 when nothing answers. */
const status = (url) =>
  new Promise((resolve) => {
    get(url, (res) => {
      res.resume();
      resolve(res.statusCode);
    }).on("error", () => resolve(0));
  });

const dataDir = mkdtempSync(join(tmpdir(), "wharf-bench-cli-"));
const [apiPort, registryPort] = [await freePort(), await freePort()];
// Run as an executable, so the shebang's node flags apply as they do for `npx wharf`.
const child = spawn(
  wharf,
  ["serve", "--api-addr", `127.0.0.1:${apiPort}`, "--registry-addr", `127.0.0.1:${registryPort}`],
  { env: { ...process.env, WHARF_DATA_DIR: dataDir }, stdio: "ignore" },
);
let exited = false;
child.once("exit", () => {
  exited = true;
});
try {
  const deadline = Date.now() + 30_000;
  while ((await status(`http://127.0.0.1:${apiPort}/ping/v2/ping`)) !== 200) {
    if (exited) throw new Error("wharf serve exited before answering the ping");
    if (Date.now() > deadline) throw new Error("wharf serve did not answer the ping within 30 s");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
} finally {
  if (!exited) {
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
  }
  rmSync(dataDir, { recursive: true, force: true });
}
