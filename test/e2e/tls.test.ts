import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { connect as tlsConnect } from "node:tls";
import { create } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { Agent, fetch as undiciFetch } from "undici";
import { PingRequestSchema, PingResponseSchema } from "../../src/gen/platform/ping/v2/ping_pb.js";
import { createWharfClient, staticToken } from "../../src/sdk/index.js";
import { caFetch, nodeTransport } from "../../src/sdk/node/index.js";
import { forEachEngine } from "../support/databases.js";
import { grpcCall } from "../support/grpc-call.js";
import { type ImageLayoutResult, writeImageLayout } from "../support/oci-layout.js";
import { podmanSandbox } from "../support/podman.js";
import { commandAvailable, runSkopeo, skopeoSkip } from "../support/skopeo.js";
import {
  type IssuedCertificate,
  makeThrowawayCa,
  opensslSkip,
  type ThrowawayCa,
} from "../support/throwaway-ca.js";
import { runWharf, serveProcess, stopProcess, type WharfProcess } from "../support/wharf-process.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

/** What a command did; a non-zero exit is returned, not thrown. */
function run(file: string, args: string[], env?: NodeJS.ProcessEnv) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(file, args, { env: env ?? process.env, timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** A new TLS connection to `url`: what ALPN chose and the certificate served. */
function handshake(url: string, ca: Buffer, options: { alpn?: string[] } = {}) {
  const { hostname, port } = new URL(url);
  return new Promise<{ alpn: string | false; fingerprint256: string }>((resolve, reject) => {
    const socket = tlsConnect({ host: hostname, port: Number(port), ca, ALPNProtocols: options.alpn }, () => {
      const result = {
        alpn: socket.alpnProtocol ?? false,
        fingerprint256: socket.getPeerCertificate().fingerprint256,
      };
      socket.end();
      resolve(result);
    });
    socket.once("error", reject);
  });
}

/** Polls `condition` every 20 ms until it holds; fails after `timeoutMs`. */
async function until(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** One HTTP/2 request on an open session; resolves with the status and body. */
function h2Request(
  session: http2.ClientHttp2Session,
  headers: http2.OutgoingHttpHeaders,
  body?: Buffer[],
): Promise<{ status: number; headers: http2.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const stream = session.request(headers, { endStream: body === undefined });
    const chunks: Buffer[] = [];
    let answer: http2.IncomingHttpHeaders = {};
    stream.on("response", (h) => {
      answer = h;
    });
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("end", () =>
      resolve({ status: Number(answer[":status"]), headers: answer, body: Buffer.concat(chunks) }),
    );
    stream.on("error", reject);
    if (body !== undefined) {
      // Several DATA frames and no Content-Length: the body's end is END_STREAM alone.
      for (const chunk of body) stream.write(chunk);
      stream.end();
    }
  });
}

const sha256 = (data: Buffer) => `sha256:${createHash("sha256").update(data).digest("hex")}`;

describe("TLS on both listeners", { skip: opensslSkip }, () => {
  let work: string;
  let ca: ThrowawayCa;
  let leaf: IssuedCertificate;
  let wharf: TestServer;
  let dispatcher: Agent;
  let acme: string;
  let https: (url: string, init?: Parameters<typeof undiciFetch>[1]) => ReturnType<typeof undiciFetch>;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), "wharf-tls-test-"));
    ca = await makeThrowawayCa(work);
    leaf = await ca.issue("server-1");
    wharf = await startTestServer({ config: { tlsCert: leaf.certFile, tlsKey: leaf.keyFile } });
    dispatcher = new Agent({ connect: { ca: ca.pem } });
    https = (url, init) => undiciFetch(url, { ...init, dispatcher });
  });
  after(async () => {
    await dispatcher?.close();
    await wharf?.close();
    await rm(work, { recursive: true, force: true });
  });

  it("serves https:// by default, with h2 and http/1.1 by ALPN on both ports", async () => {
    assert.match(wharf.apiUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.match(wharf.registryUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
    for (const url of [wharf.apiUrl, wharf.registryUrl]) {
      assert.equal((await handshake(url, ca.pem, { alpn: ["h2", "http/1.1"] })).alpn, "h2", url);
      assert.equal((await handshake(url, ca.pem, { alpn: ["http/1.1"] })).alpn, "http/1.1", url);
      const served = await handshake(url, ca.pem);
      assert.equal(served.fingerprint256, leaf.fingerprint256, `${url} serves the configured certificate`);
    }
    // The issuer's discovery document names the https URL (the default public URL).
    const discovery = (await (await https(`${wharf.apiUrl}/.well-known/openid-configuration`)).json()) as {
      issuer: string;
    };
    assert.equal(discovery.issuer, wharf.apiUrl);
  });

  it("curl without the CA fails (exit 60); with --cacert it gets answers over HTTP/2 and HTTP/1.1", async () => {
    for (const url of [wharf.apiUrl, wharf.registryUrl]) {
      const refused = await run("curl", ["-sS", "-o", "/dev/null", `${url}/healthz`]);
      assert.equal(refused.code, 60, `curl ${url} without the CA: ${refused.stderr}`);
      for (const [flag, version] of [
        ["--http2", "2"],
        ["--http1.1", "1.1"],
      ] as const) {
        const ok = await run("curl", [
          ...["-sS", flag, "--cacert", ca.certFile, "-o", "/dev/null"],
          ...["-w", "%{http_code} %{http_version}", `${url}/healthz`],
        ]);
        assert.equal(ok.code, 0, ok.stderr);
        assert.equal(ok.stdout, `200 ${version}`, `${url} ${flag}`);
      }
    }
  });

  it("refuses TLS 1.1 and takes TLS 1.2", async () => {
    const { hostname, port } = new URL(wharf.apiUrl);
    const attempt = (maxVersion: "TLSv1.1" | "TLSv1.2") =>
      new Promise<string>((resolve) => {
        // SECLEVEL=0 lets this client offer TLS 1.1 at all: the refusal must be the server's.
        const socket = tlsConnect(
          {
            host: hostname,
            port: Number(port),
            ca: ca.pem,
            minVersion: "TLSv1",
            maxVersion,
            ciphers: "DEFAULT@SECLEVEL=0",
          },
          () => {
            resolve(`connected ${socket.getProtocol()}`);
            socket.end();
          },
        );
        socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      });
    assert.equal(await attempt("TLSv1.1"), "ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION");
    assert.equal(await attempt("TLSv1.2"), "connected TLSv1.2");
  });

  it("REST over https with undici and the CA", async () => {
    const res = await https(`${wharf.apiUrl}/iam/v2/groups`, {
      method: "POST",
      headers: { authorization: `Bearer ${wharf.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "acme" }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    acme = ((await res.json()) as { uid: string }).uid;
    assert.match(acme, /./);
  });

  it("grpc-js calls over TLS with the CA, and fails without it", async () => {
    const target = new URL(wharf.apiUrl).host;
    const secure = new grpc.Client(target, grpc.credentials.createSsl(ca.pem));
    const untrusting = new grpc.Client(target, grpc.credentials.createSsl());
    try {
      const schemas = { input: PingRequestSchema, output: PingResponseSchema };
      const ping = await grpcCall(
        secure,
        "/platform.ping.v2.PingService/Ping",
        schemas,
        create(PingRequestSchema),
      );
      assert.equal(ping.response?.response, "pong", String(ping.error));
      const refused = await grpcCall(
        untrusting,
        "/platform.ping.v2.PingService/Ping",
        schemas,
        create(PingRequestSchema),
      );
      assert.equal(refused.error?.code, grpc.status.UNAVAILABLE);
    } finally {
      secure.close();
      untrusting.close();
    }
  });

  it("the SDK takes a CA: Connect over h2, gRPC, and its fetch (registry URL, STS)", async () => {
    const fetchWithCa = caFetch(ca.pem);
    try {
      for (const transport of [
        nodeTransport({ httpVersion: "2", ca: ca.pem }),
        nodeTransport({ protocol: "grpc", ca: ca.pem }),
        nodeTransport({ ca: ca.pem }),
      ]) {
        const client = createWharfClient({
          apiUrl: wharf.apiUrl,
          tokenSource: staticToken(wharf.adminToken),
          transport,
          fetch: fetchWithCa,
        });
        assert.equal((await client.ping.ping({})).response, "pong");
        assert.equal((await client.iam.groups.getGroup({ uid: acme })).name, "acme");
        assert.equal(await client.registryUrl(), wharf.registryUrl);
      }
      // The default transport (Connect over fetch) goes through the given fetch too.
      const viaFetch = createWharfClient({ apiUrl: wharf.apiUrl, fetch: fetchWithCa });
      assert.equal((await viaFetch.ping.ping({})).response, "pong");
    } finally {
      await fetchWithCa.close();
    }
  });

  it("the registry takes a chunked upload over HTTP/2 (no Content-Length) and serves it back", async () => {
    const token = await wharf.registryToken();
    const session = http2.connect(wharf.registryUrl, { ca: ca.pem });
    try {
      const auth = { authorization: `Bearer ${token}` };
      const start = await h2Request(
        session,
        { ":method": "POST", ":path": "/v2/acme/h2/blobs/uploads/", ...auth },
        [],
      );
      assert.equal(start.status, 202, start.body.toString());
      // Large windows for uploads, not HTTP/2's default 64 KiB.
      assert.equal(session.remoteSettings.initialWindowSize, 4 * 1024 * 1024);
      const location = String(start.headers.location);
      const parts = [Buffer.alloc(70_000, 1), Buffer.alloc(5, 2), Buffer.from("last")];
      const patch = await h2Request(
        session,
        { ":method": "PATCH", ":path": location, ...auth },
        parts.slice(0, 2),
      );
      assert.equal(patch.status, 202, patch.body.toString());
      const whole = Buffer.concat(parts);
      const digest = sha256(whole);
      const put = await h2Request(
        session,
        { ":method": "PUT", ":path": `${location}?digest=${digest}`, ...auth },
        parts.slice(2),
      );
      assert.equal(put.status, 201, put.body.toString());
      const got = await h2Request(session, {
        ":method": "GET",
        ":path": `/v2/acme/h2/blobs/${digest}`,
        ...auth,
      });
      assert.equal(got.status, 200);
      assert.equal(sha256(got.body), digest);
      const logged = wharf.logLines.filter((l) => l.service === "registry" && l.method === "PUT");
      assert.ok(
        logged.some((l) => l.status === 201 && l.clientAddress === "127.0.0.1"),
        JSON.stringify(logged),
      );
    } finally {
      session.close();
    }
  });

  describe("skopeo and podman over https with --cert-dir", { skip: skopeoSkip }, () => {
    let source: string;
    let v1: ImageLayoutResult;
    let host: string;
    let creds: string;

    before(async () => {
      source = join(work, "layout");
      v1 = await writeImageLayout(source, { tag: "v1", files: { "etc/version": "1\n" }, layers: 2 });
      host = new URL(wharf.registryUrl).host;
      creds = `_token:${await wharf.registryToken()}`;
    });

    it("skopeo refuses the registry without the CA, and pushes and pulls with it", async () => {
      const ref = `docker://${host}/acme/app:v1`;
      const untrusted = await runSkopeo(["copy", "--dest-creds", creds, `oci:${source}:v1`, ref]);
      assert.notEqual(untrusted.code, 0);
      assert.match(untrusted.stderr, /certificate/i);
      const push = await runSkopeo([
        "copy",
        "--dest-cert-dir",
        ca.certDir,
        "--dest-creds",
        creds,
        `oci:${source}:v1`,
        ref,
      ]);
      assert.equal(push.code, 0, push.stderr);
      const inspect = await runSkopeo(["inspect", "--raw", "--cert-dir", ca.certDir, "--creds", creds, ref]);
      assert.equal(inspect.code, 0, inspect.stderr);
      assert.equal(sha256(Buffer.from(inspect.stdout)), v1.manifestDigest);
      const out = join(work, "pulled");
      const pull = await runSkopeo([
        "copy",
        "--src-cert-dir",
        ca.certDir,
        "--src-creds",
        creds,
        ref,
        `oci:${out}:v1`,
      ]);
      assert.equal(pull.code, 0, pull.stderr);
    });

    it("podman pulls and pushes with --cert-dir (root, vfs storage)", {
      skip: commandAvailable("podman") ? false : "podman not installed: apt-get install podman",
    }, async () => {
      const pushed = await runSkopeo([
        ...["copy", "--dest-cert-dir", ca.certDir, "--dest-creds", creds],
        ...[`oci:${source}:v1`, `docker://${host}/acme/app:for-podman`],
      ]);
      assert.equal(pushed.code, 0, pushed.stderr);
      const { podman, policy } = await podmanSandbox(work);
      const pull = await podman([
        ...["pull", "--cert-dir", ca.certDir, "--creds", creds, "--signature-policy", policy],
        `${host}/acme/app:for-podman`,
      ]);
      assert.equal(pull.code, 0, pull.stderr);
      const push = await podman([
        ...["push", "--cert-dir", ca.certDir, "--creds", creds, "--signature-policy", policy],
        ...[`${host}/acme/app:for-podman`, `docker://${host}/acme/app:from-podman`],
      ]);
      assert.equal(push.code, 0, push.stderr);
      const inspect = await runSkopeo([
        ...["inspect", "--cert-dir", ca.certDir, "--creds", creds],
        `docker://${host}/acme/app:from-podman`,
      ]);
      assert.equal(inspect.code, 0, inspect.stderr);
      const layers = (JSON.parse(inspect.stdout) as { Layers: string[] }).Layers;
      assert.equal(layers.length, 2, "the image podman pushed has the pulled image's layers");
    });
  });

  it("ignores forwarded headers from an untrusted peer (no --trust-proxy)", async () => {
    const forwarded = {
      "x-forwarded-for": "203.0.113.7",
      "x-forwarded-proto": "https",
      "x-forwarded-host": "registry.example.com",
    };
    const challenge = await https(`${wharf.registryUrl}/v2/`, { headers: forwarded });
    assert.equal(challenge.status, 401);
    assert.match(
      challenge.headers.get("www-authenticate") ?? "",
      new RegExp(`realm="${wharf.registryUrl}/token"`),
    );
    await challenge.arrayBuffer();
    const api = await https(`${wharf.apiUrl}/iam/v2/groups`, {
      headers: { ...forwarded, "x-request-id": "untrusted-1" },
    });
    await api.arrayBuffer();
    const apiLine = wharf.logLines.find((l) => l.requestId === "untrusted-1");
    assert.equal(apiLine?.clientAddress, "127.0.0.1");
    const registryLine = wharf.logLines.findLast((l) => l.service === "registry" && l.path === "/v2/");
    assert.equal(registryLine?.clientAddress, "127.0.0.1");
  });
});

describe("--trust-proxy", () => {
  let wharf: TestServer;

  before(async () => {
    wharf = await startTestServer({ config: { trustProxy: "127.0.0.1/32, 10.0.0.0/8" } });
  });
  after(() => wharf?.close());

  it("a trusted peer's X-Forwarded-For gives the client address, its proto and host the token realm", async () => {
    const forwarded = {
      // The client, then a proxy inside 10/8 that is trusted too: the right-most untrusted hop counts.
      "x-forwarded-for": "198.51.100.1, 203.0.113.7, 10.1.2.3",
      "x-forwarded-proto": "https",
      "x-forwarded-host": "registry.example.com",
    };
    const challenge = await wharf.registry("/v2/", { headers: forwarded });
    assert.equal(challenge.status, 401);
    assert.match(
      challenge.headers.get("www-authenticate") ?? "",
      /realm="https:\/\/registry\.example\.com\/token"/,
    );
    await challenge.arrayBuffer();
    const registryLine = wharf.logLines.findLast((l) => l.service === "registry" && l.path === "/v2/");
    assert.equal(registryLine?.clientAddress, "203.0.113.7");

    const api = await fetch(`${wharf.apiUrl}/iam/v2/groups`, {
      headers: { ...forwarded, "x-request-id": "trusted-1" },
    });
    await api.arrayBuffer();
    assert.equal(wharf.logLines.find((l) => l.requestId === "trusted-1")?.clientAddress, "203.0.113.7");

    // Without forwarded headers the peer is the client, and the realm the configured URL.
    const plain = await wharf.registry("/v2/");
    assert.match(
      plain.headers.get("www-authenticate") ?? "",
      new RegExp(`realm="${wharf.registryUrl}/token"`),
    );
    await plain.arrayBuffer();
    assert.equal(wharf.logLines.findLast((l) => l.service === "registry")?.clientAddress, "127.0.0.1");
  });
});

describe("certificate reload on SIGHUP, and bad TLS flags", { skip: opensslSkip }, () => {
  let work: string;
  let ca: ThrowawayCa;
  let first: IssuedCertificate;
  let second: IssuedCertificate;
  let server: WharfProcess | undefined;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), "wharf-tls-reload-"));
    ca = await makeThrowawayCa(work);
    first = await ca.issue("first");
    second = await ca.issue("second");
  });
  after(async () => {
    if (server) await stopProcess(server);
    await rm(work, { recursive: true, force: true });
  });

  it("swaps the served certificate for new connections; an open one keeps working", async () => {
    const cert = join(work, "live.crt");
    const key = join(work, "live.key");
    await copyFile(first.certFile, cert);
    await copyFile(first.keyFile, key);
    server = await serveProcess(join(work, "data"), { WHARF_TLS_CERT: cert, WHARF_TLS_KEY: key });
    const { apiUrl, registryUrl } = server;
    assert.match(apiUrl, /^https:/);
    assert.equal((await handshake(apiUrl, ca.pem)).fingerprint256, first.fingerprint256);

    const open = http2.connect(apiUrl, { ca: ca.pem });
    try {
      assert.equal((await h2Request(open, { ":path": "/healthz" })).status, 200);
      await copyFile(second.certFile, cert);
      await copyFile(second.keyFile, key);
      server.child.kill("SIGHUP");
      const current = server;
      await until(() => current.output().includes("tls certificates reloaded"), "the reload line");
      for (const url of [apiUrl, registryUrl])
        assert.equal((await handshake(url, ca.pem)).fingerprint256, second.fingerprint256, url);
      // The connection opened before the reload is still served, with the certificate it began with.
      assert.equal((await h2Request(open, { ":path": "/healthz" })).status, 200);
      assert.equal(
        (open.socket as unknown as { getPeerCertificate(): { fingerprint256: string } }).getPeerCertificate()
          .fingerprint256,
        first.fingerprint256,
      );

      // A bad file: one error line, and the current certificate stays.
      await writeFile(cert, "not a certificate\n");
      server.child.kill("SIGHUP");
      await until(() => current.output().includes("tls reload failed"), "the failed reload line");
      const failed = current
        .output()
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as { msg?: string; level?: string; error?: string })
        .filter((line) => line.msg === "tls reload failed; the current certificates stay");
      assert.equal(failed.length, 1);
      assert.equal(failed[0]?.level, "error");
      assert.match(failed[0]?.error ?? "", /--tls-cert .*live\.crt holds no PEM certificate/);
      assert.equal((await handshake(apiUrl, ca.pem)).fingerprint256, second.fingerprint256);
      assert.equal(server.child.exitCode, null, "still running");
    } finally {
      open.close();
    }
  });

  it("refuses half a pair, a missing file, a bad PEM, a key of another certificate: one line, exit 2", async () => {
    const bad = join(work, "bad.pem");
    await writeFile(bad, "-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n");
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: work };
    const serve = (...flags: string[]) =>
      runWharf(["serve", "--data-dir", join(work, "refused"), "--api-addr", "127.0.0.1:0", ...flags], env);
    const cases: [string[], RegExp][] = [
      [
        ["--tls-cert", first.certFile],
        /^wharf: --tls-cert and --tls-key go together \(got only --tls-cert\)\n$/,
      ],
      [
        ["--registry-tls-key", first.keyFile],
        /^wharf: --registry-tls-cert and --registry-tls-key go together/,
      ],
      [
        ["--tls-cert", join(work, "absent.crt"), "--tls-key", first.keyFile],
        /^wharf: --tls-cert .*absent\.crt cannot be read \(no such file\)\n$/,
      ],
      [
        ["--tls-cert", bad, "--tls-key", first.keyFile],
        /^wharf: --tls-cert .*bad\.pem holds no PEM certificate\n$/,
      ],
      [
        ["--tls-cert", first.certFile, "--tls-key", first.certFile],
        /^wharf: --tls-key .*first\.crt holds no unencrypted PEM private key\n$/,
      ],
      [
        ["--tls-cert", first.certFile, "--tls-key", second.keyFile],
        /^wharf: --tls-key .*second\.key is not the key of --tls-cert .*first\.crt\n$/,
      ],
      [
        ["--trust-proxy", "10.0.0.0/8,nonsense"],
        /^wharf: --trust-proxy must be a comma-separated list of CIDRs: "nonsense" is no CIDR/,
      ],
    ];
    for (const [flags, expected] of cases) {
      const result = await serve(...flags);
      assert.equal(result.code, 2, `${flags.join(" ")}: ${result.stderr}`);
      assert.match(result.stderr, expected, flags.join(" "));
    }
  });
});

forEachEngine(
  "certificate reload under --workers 2",
  (db) => {
    let work: string;
    let server: WharfProcess | undefined;

    before(async () => {
      work = await mkdtemp(join(tmpdir(), "wharf-tls-workers-"));
    });
    after(async () => {
      if (server) await stopProcess(server);
      await rm(work, { recursive: true, force: true });
    });

    it("the primary forwards SIGHUP; every worker serves the new certificate", {
      skip: opensslSkip,
    }, async () => {
      const ca = await makeThrowawayCa(work);
      const first = await ca.issue("first");
      const second = await ca.issue("second");
      const cert = join(work, "live.crt");
      const key = join(work, "live.key");
      await copyFile(first.certFile, cert);
      await copyFile(first.keyFile, key);
      const { databaseUrl } = (await db.freshOptions()) as { databaseUrl: string };
      server = await serveProcess(join(work, "data"), {
        WHARF_DATABASE_URL: databaseUrl,
        WHARF_WORKERS: "2",
        WHARF_TLS_CERT: cert,
        WHARF_TLS_KEY: key,
      });
      const current = server;
      assert.match(current.apiUrl, /^https:/);
      await copyFile(second.certFile, cert);
      await copyFile(second.keyFile, key);
      current.child.kill("SIGHUP");
      const reloadedBy = () =>
        new Set(
          current
            .output()
            .split("\n")
            .filter((line) => line.includes('"msg":"tls certificates reloaded"'))
            .map((line) => (JSON.parse(line) as { worker?: number }).worker),
        );
      await until(() => reloadedBy().size === 2, "both workers' reload lines");
      assert.deepEqual([...reloadedBy()].sort(), [1, 2]);
      assert.match(current.output(), /SIGHUP forwarded to the workers/);
      // New connections are spread over the workers: each of them serves the new certificate.
      for (let i = 0; i < 6; i++)
        assert.equal((await handshake(current.apiUrl, ca.pem)).fingerprint256, second.fingerprint256);
      assert.equal(current.child.exitCode, null, "the primary still runs");
    });
  },
  ["postgres"],
);
