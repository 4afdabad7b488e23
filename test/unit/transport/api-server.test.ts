import assert from "node:assert/strict";
import http from "node:http";
import http2 from "node:http2";
import type net from "node:net";
import { describe, it } from "node:test";
import { type ApiServerHandler, bindApiServer } from "../../../src/transport/api-server.js";
import type { DualRequestListener } from "../../../src/transport/one-port-listener.js";

const hello: DualRequestListener = (req, res) => {
  res.setHeader("content-type", "text/plain");
  res.end(`hello ${req.method} ${req.url}`);
};

/** The status, headers and body of one HTTP/1.1 request over `agent`. */
function http1(
  port: number,
  init: { method?: string; path?: string; body?: string; agent?: http.Agent },
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string; socket: net.Socket }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        method: init.method ?? "GET",
        path: init.path ?? "/",
        agent: init.agent ?? false,
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, socket: res.socket }),
        );
      },
    );
    req.on("error", reject);
    req.end(init.body);
  });
}

function h2(
  port: number,
  path: string,
): Promise<{ status: number; headers: http2.IncomingHttpHeaders; text: string }> {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  return new Promise((resolve, reject) => {
    session.on("error", reject);
    const stream = session.request({ ":path": path });
    let headers: http2.IncomingHttpHeaders = {};
    let text = "";
    stream.on("response", (h) => {
      headers = h;
    });
    stream.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    stream.on("end", () => {
      session.close();
      resolve({ status: Number(headers[":status"]), headers, text });
    });
    stream.on("error", reject);
    stream.end();
  });
}

/** The google.rpc.Status JSON every request gets before `serve`. */
function assertNotServing(res: { status: number; headers: Record<string, unknown>; text: string }): void {
  assert.equal(res.status, 503);
  assert.equal(res.headers["retry-after"], "1");
  assert.match(String(res.headers["content-type"]), /^application\/json/);
  const body = JSON.parse(res.text) as { code: number; message: string };
  assert.equal(body.code, 14, "UNAVAILABLE");
  assert.equal(body.message, "Unavailable: the server is starting; retry shortly");
}

describe("bindApiServer", () => {
  it("knows its address before serving and answers 503 until serve, then the handler", async () => {
    const server = await bindApiServer({ host: "127.0.0.1", port: 0 });
    try {
      assert.equal(server.address.host, "127.0.0.1");
      assert.ok(server.address.port > 0, "the real port of port 0");
      assertNotServing(await http1(server.address.port, { path: "/v2/ping" }));
      assertNotServing(await h2(server.address.port, "/v2/ping"));
      const head = await http1(server.address.port, { method: "HEAD" });
      assert.equal(head.status, 503);
      assert.equal(head.text, "", "no body for HEAD");

      server.serve(hello);
      assert.equal((await http1(server.address.port, { path: "/a" })).text, "hello GET /a");
      assert.equal((await h2(server.address.port, "/b")).text, "hello GET /b");
    } finally {
      await server.close({ graceMs: 0 });
    }
  });

  it("discards the body of a request it answered before serve; the keep-alive connection goes on", async () => {
    const server = await bindApiServer({ host: "127.0.0.1", port: 0 });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const early = await http1(server.address.port, {
        method: "POST",
        path: "/upload",
        body: "x".repeat(256 * 1024),
        agent,
      });
      assertNotServing(early);
      server.serve(hello);
      const later = await http1(server.address.port, { path: "/after", agent });
      assert.equal(later.text, "hello GET /after");
      assert.equal(later.socket, early.socket, "the same connection");
    } finally {
      agent.destroy();
      await server.close({ graceMs: 0 });
    }
  });

  it("offers HTTP/2 streams to the served handler's onStream only once served", async () => {
    const server = await bindApiServer({ host: "127.0.0.1", port: 0 });
    try {
      assertNotServing(await h2(server.address.port, "/raw"));
      const handler: ApiServerHandler = (req, res) => hello(req, res);
      handler.onStream = (stream, headers) => {
        if (headers[":path"] !== "/raw") return false;
        stream.respond({ ":status": 200 });
        stream.end("raw stream");
        return true;
      };
      server.serve(handler);
      assert.equal((await h2(server.address.port, "/raw")).text, "raw stream");
      assert.equal((await h2(server.address.port, "/other")).text, "hello GET /other");
    } finally {
      await server.close({ graceMs: 0 });
    }
  });

  it("takes one handler: a second serve throws", async () => {
    const server = await bindApiServer({ host: "127.0.0.1", port: 0 });
    try {
      server.serve(hello);
      assert.throws(() => server.serve(hello), /already serves/);
    } finally {
      await server.close({ graceMs: 0 });
    }
  });

  it("closes without ever serving and frees the port", async () => {
    const server = await bindApiServer({ host: "127.0.0.1", port: 0 });
    const { port } = server.address;
    await server.close({ graceMs: 0 });
    const again = await bindApiServer({ host: "127.0.0.1", port });
    await again.close({ graceMs: 0 });
  });
});
