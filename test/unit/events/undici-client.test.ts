import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { describe, it } from "node:test";
import { promisify } from "node:util";

const run = promisify(execFile);
// The module that delivers webhooks, which loads undici (through src/events/undici-client.ts).
const WEBHOOK_SENDER = new URL("../../../src/events/webhook-sender.ts", import.meta.url).href;

// In a process of its own: whether undici takes over depends on what loaded before it.
const SCRIPT = `
import { createServer } from "node:http";
const symbol = Symbol.for("undici.globalDispatcher.1");
const { createWebhookSender } = await import(${JSON.stringify(WEBHOOK_SENDER)});
const { Agent } = await import("undici");
const server = createServer((req, res) => {
  let size = 0;
  req.on("data", (c) => (size += c.length)).on("end", () => res.end(String(size)));
}).listen(0, "127.0.0.1");
await new Promise((r) => server.once("listening", r));
const res = await fetch("http://127.0.0.1:" + server.address().port + "/", {
  method: "PATCH",
  headers: { "content-length": "5" },
  body: Buffer.from("hello"),
});
console.log(JSON.stringify({
  undiciIsFetchsDispatcher: globalThis[symbol] instanceof Agent,
  sender: typeof createWebhookSender,
  status: res.status,
  body: await res.text(),
}));
server.close();
`;

describe("undici-client", () => {
  it("loads undici without making it fetch's dispatcher: fetch with a content-length header still works", async () => {
    const { stdout } = await run(process.execPath, ["--import", "tsx", "--input-type=module", "-e", SCRIPT]);
    assert.deepEqual(JSON.parse(stdout), {
      undiciIsFetchsDispatcher: false,
      sender: "function",
      status: 200,
      body: "5",
    });
  });
});
