import assert from "node:assert/strict";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { describe, it } from "node:test";
import { type DualRequestListener, listenOnePort } from "../../../src/transport/one-port-listener.js";

const echo: DualRequestListener = (req, res) => {
  let body = "";
  req.on("data", (chunk: Buffer) => {
    body += chunk.toString();
  });
  req.on("end", () => {
    if (req.url === "/slow") {
      setTimeout(() => res.end("slow done"), 150);
      return;
    }
    res.end(`HTTP/${req.httpVersion} ${req.method} ${req.url} ${body}`);
  });
};

function h2request(
  session: http2.ClientHttp2Session,
  path: string,
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ":path": path, ":method": body === undefined ? "GET" : "POST" });
    let status = 0;
    let text = "";
    stream.on("response", (headers) => {
      status = Number(headers[":status"]);
    });
    stream.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    stream.on("end", () => resolve({ status, text }));
    stream.on("error", reject);
    stream.end(body);
  });
}

function http1request(port: number, path: string, agent: http.Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: "127.0.0.1", port, path, agent }, (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on("end", () => resolve(text));
      })
      .on("error", reject);
  });
}

describe("listenOnePort", () => {
  it("offers HTTP/2 streams to onStream first; the ones it leaves reach the handler", async () => {
    const server = await listenOnePort({
      port: 0,
      handler: echo,
      onStream: (stream, headers) => {
        if (headers[":path"] !== "/raw") return false;
        stream.respond({ ":status": 200 });
        stream.end("raw stream");
        return true;
      },
    });
    const session = http2.connect(`http://127.0.0.1:${server.address.port}`);
    try {
      assert.deepEqual(await h2request(session, "/raw"), { status: 200, text: "raw stream" }, "taken");
      assert.deepEqual(
        await h2request(session, "/other", "x"),
        { status: 200, text: "HTTP/2.0 POST /other x" },
        "left to the handler",
      );
    } finally {
      session.close();
      await server.close();
    }
  });

  it("serves HTTP/1.1 and h2c on one port chosen by the OS", async () => {
    const server = await listenOnePort({ port: 0, handler: echo });
    try {
      assert.ok(server.address.port > 0);
      const res = await fetch(`http://127.0.0.1:${server.address.port}/one`, { method: "POST", body: "hi" });
      assert.equal(await res.text(), "HTTP/1.1 POST /one hi");
      const session = http2.connect(`http://127.0.0.1:${server.address.port}`);
      try {
        assert.deepEqual(await h2request(session, "/two", "there"), {
          status: 200,
          text: "HTTP/2.0 POST /two there",
        });
        // Several streams on the same session.
        const answers = await Promise.all([h2request(session, "/a"), h2request(session, "/b")]);
        assert.deepEqual(
          answers.map((a) => a.text),
          ["HTTP/2.0 GET /a ", "HTTP/2.0 GET /b "],
        );
      } finally {
        session.destroy();
      }
    } finally {
      await server.close();
    }
  });

  it("routes by the first bytes even when they arrive one at a time", async () => {
    const server = await listenOnePort({ port: 0, handler: echo });
    try {
      const socket = net.connect(server.address.port, "127.0.0.1");
      await new Promise((resolve) => socket.once("connect", resolve));
      const request = "GET /slowly HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
      let answer = "";
      socket.on("data", (chunk: Buffer) => {
        answer += chunk.toString();
      });
      for (const c of request.slice(0, 3)) {
        socket.write(c);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      socket.write(request.slice(3));
      await new Promise((resolve) => socket.once("close", resolve));
      assert.match(answer, /^HTTP\/1\.1 200 OK/);
      assert.match(answer, /HTTP\/1\.1 GET \/slowly $/);
    } finally {
      await server.close();
    }
  });

  it("closes promptly with idle keep-alive sockets, an open h2 session and a silent connection", async () => {
    const server = await listenOnePort({ port: 0, handler: echo });
    const agent = new http.Agent({ keepAlive: true });
    const session = http2.connect(`http://127.0.0.1:${server.address.port}`);
    session.on("error", () => {});
    const silent = net.connect(server.address.port, "127.0.0.1");
    silent.on("error", () => {});
    try {
      await new Promise((resolve) => silent.once("connect", resolve));
      await http1request(server.address.port, "/keep", agent);
      await h2request(session, "/open");
      const started = Date.now();
      await server.close();
      assert.ok(Date.now() - started < 2000, `close took ${Date.now() - started} ms`);
      await server.close(); // idempotent
    } finally {
      agent.destroy();
      session.destroy();
      silent.destroy();
    }
  });

  it("lets in-flight requests finish during the grace period", async () => {
    // Close only once both requests are in the handler: a request still on its way is not in flight.
    let arrived = 0;
    let bothArrived: () => void = () => {};
    const inHandler = new Promise<void>((resolve) => {
      bothArrived = resolve;
    });
    const counting: DualRequestListener = (req, res) => {
      if (++arrived === 2) bothArrived();
      echo(req, res);
    };
    const server = await listenOnePort({ port: 0, handler: counting });
    const agent = new http.Agent({ keepAlive: true });
    const session = http2.connect(`http://127.0.0.1:${server.address.port}`);
    try {
      const h1 = http1request(server.address.port, "/slow", agent);
      const h2 = h2request(session, "/slow");
      await inHandler;
      await server.close({ graceMs: 2000 });
      assert.equal(await h1, "slow done");
      assert.equal((await h2).text, "slow done");
    } finally {
      agent.destroy();
      session.destroy();
    }
  });

  it("cuts requests that outlive the grace period", async () => {
    let arrived: () => void = () => {};
    const inHandler = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const stuck: DualRequestListener = () => arrived();
    const server = await listenOnePort({ port: 0, handler: stuck });
    const pending = fetch(`http://127.0.0.1:${server.address.port}/never`).then(
      () => "answered",
      () => "cut",
    );
    await inHandler;
    const started = Date.now();
    await server.close({ graceMs: 100 });
    assert.ok(Date.now() - started < 1500);
    assert.equal(await pending, "cut");
  });

  it("rejects when the port is taken", async () => {
    const first = await listenOnePort({ port: 0, handler: echo });
    try {
      await assert.rejects(listenOnePort({ port: first.address.port, handler: echo }), /EADDRINUSE/);
    } finally {
      await first.close();
    }
  });
});
