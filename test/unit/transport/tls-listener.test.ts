import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import http2 from "node:http2";
import https from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { connect as tlsConnect } from "node:tls";
import { listenOnePort } from "../../../src/transport/one-port-listener.js";
import { createTlsTerminator, type TlsPair } from "../../../src/transport/tls-terminator.js";
import {
  type IssuedCertificate,
  makeThrowawayCa,
  opensslSkip,
  type ThrowawayCa,
} from "../../support/throwaway-ca.js";

describe("the one-port listener with TLS", { skip: opensslSkip }, () => {
  let dir: string;
  let ca: ThrowawayCa;
  let leaf: IssuedCertificate;
  let pair: TlsPair;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "wharf-tls-unit-"));
    ca = await makeThrowawayCa(dir);
    leaf = await ca.issue("unit");
    pair = { cert: await readFile(leaf.certFile), key: await readFile(leaf.keyFile) };
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it("serves HTTP/1.1 and h2 by ALPN with one handler, and closes with both kinds of connection open", async () => {
    const listener = await listenOnePort({
      port: 0,
      tls: createTlsTerminator(pair),
      handler: (req, res) => res.end(`${req.httpVersion} ${req.url}`),
    });
    const base = `https://127.0.0.1:${listener.address.port}`;
    const agent = new https.Agent({ ca: ca.pem, keepAlive: true });
    const viaHttp1 = await new Promise<string>((resolve, reject) => {
      https
        .get(`${base}/one`, { agent }, (res) => {
          let text = "";
          res.on("data", (c: Buffer) => {
            text += c.toString();
          });
          res.on("end", () => resolve(text));
        })
        .on("error", reject);
    });
    assert.equal(viaHttp1, "1.1 /one");
    const session = http2.connect(base, { ca: ca.pem });
    const viaH2 = await new Promise<string>((resolve, reject) => {
      const stream = session.request({ ":path": "/two" });
      let text = "";
      stream.on("data", (c: Buffer) => {
        text += c.toString();
      });
      stream.on("end", () => resolve(text));
      stream.on("error", reject);
    });
    assert.equal(viaH2, "2.0 /two");
    // An idle keep-alive connection and an idle HTTP/2 session do not hold the close.
    const started = performance.now();
    await listener.close({ graceMs: 10_000 });
    assert.ok(performance.now() - started < 5_000, "closed without waiting for the grace period");
    agent.destroy();
    session.destroy();
  });

  it("a reload with a key of another certificate throws, and the current pair stays served", async () => {
    const other = await ca.issue("other");
    const terminator = createTlsTerminator(pair);
    const listener = await listenOnePort({ port: 0, tls: terminator, handler: (_req, res) => res.end() });
    try {
      assert.throws(() => terminator.reload({ cert: pair.cert, key: readFileSync(other.keyFile) }));
      const served = await new Promise<string>((resolve, reject) => {
        const socket = tlsConnect({ host: "127.0.0.1", port: listener.address.port, ca: ca.pem }, () => {
          resolve(socket.getPeerCertificate().fingerprint256);
          socket.end();
        });
        socket.on("error", reject);
      });
      assert.equal(served, leaf.fingerprint256);
      terminator.reload({ cert: readFileSync(other.certFile), key: readFileSync(other.keyFile) });
      const swapped = await new Promise<string>((resolve, reject) => {
        const socket = tlsConnect({ host: "127.0.0.1", port: listener.address.port, ca: ca.pem }, () => {
          resolve(socket.getPeerCertificate().fingerprint256);
          socket.end();
        });
        socket.on("error", reject);
      });
      assert.equal(swapped, other.fingerprint256);
    } finally {
      await listener.close({ graceMs: 0 });
    }
  });
});
