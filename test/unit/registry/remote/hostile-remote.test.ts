import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";
import { after, describe, it } from "node:test";
import {
  createSinkAddressPolicy,
  type SinkAddressPolicy,
} from "../../../../src/events/sink-address-policy.js";
import { createRemoteRegistry } from "../../../../src/registry/remote/remote-client.js";
import {
  RemoteError,
  type RemoteErrorKind,
  type RemoteRegistryOptions,
} from "../../../../src/registry/remote/remote-registry.js";
import { type HostileRegistry, startHostileRegistry } from "../../../support/hostile-registry.js";
import { blob, collect, image, readAll, sha256 } from "../../../support/remote-content.js";
import { fakeSinkResolver } from "../../../support/sink-dns.js";

const LOOPBACK = createSinkAddressPolicy({ allow: [], allowLoopback: true });
/** Only 127.0.0.1 is open: the rest of 127/8 stands for addresses the policy refuses. */
const ONLY_127_0_0_1 = createSinkAddressPolicy({ allow: ["127.0.0.1/32"], allowLoopback: false });
const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";

const servers: HostileRegistry[] = [];
after(async () => {
  for (const s of servers) await s.close();
});

async function hostile(
  handler: Parameters<typeof startHostileRegistry>[0],
  host?: string,
): Promise<HostileRegistry> {
  const server = await startHostileRegistry(handler, host);
  servers.push(server);
  return server;
}

function client(server: { url: string }, extra: Partial<RemoteRegistryOptions> = {}) {
  return createRemoteRegistry({
    url: server.url,
    policy: LOOPBACK as SinkAddressPolicy,
    allowHttp: true,
    clock: { now: () => Date.now() },
    timeoutMs: 2000,
    ...extra,
  });
}

async function rejectsWith(
  promise: Promise<unknown>,
  kind: RemoteErrorKind,
  message?: RegExp,
): Promise<RemoteError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof RemoteError, `a RemoteError, not ${String(err)}`);
    assert.equal(err.kind, kind, err.message);
    if (message) assert.match(err.message, message);
    return err;
  }
  assert.fail(`expected a ${kind} RemoteError`);
}

function manifestAnswer(res: ServerResponse, bytes: Buffer, digest?: string): void {
  res.writeHead(200, {
    "content-type": OCI_MANIFEST,
    "content-length": bytes.length,
    ...(digest ? { "docker-content-digest": digest } : {}),
  });
  res.end(bytes);
}

describe("remote client against a hostile registry: content", () => {
  const img = image([10]);
  const other = image([10]);

  it("refuses a manifest whose bytes are not the digest asked for", async () => {
    const server = await hostile((_req, res) => manifestAnswer(res, other.manifest, img.digest));
    const remote = client(server);
    const err = await rejectsWith(remote.getManifest("app", img.digest), "digest-mismatch");
    assert.match(err.message, new RegExp(`hashes to ${other.digest}, not ${img.digest}`));
    assert.match(err.message, /manifest app@sha256:\S+ at http:\/\/127\.0\.0\.1:\d+/);
    await remote.close();
  });

  it("refuses a tag whose Docker-Content-Digest does not match the bytes; accepts it without the header", async () => {
    let header: string | undefined = img.digest;
    const server = await hostile((_req, res) => manifestAnswer(res, other.manifest, header));
    const remote = client(server);
    await rejectsWith(remote.getManifest("app", "v1"), "digest-mismatch");
    header = undefined;
    const got = await remote.getManifest("app", "v1");
    assert.equal(got.digest, other.digest);
    assert.equal(got.mediaType, OCI_MANIFEST);
    assert.deepEqual(Buffer.from(got.content), other.manifest);
    await remote.close();
  });

  it("takes the media type from the body when the Content-Type says nothing", async () => {
    const server = await hostile((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(img.manifest);
    });
    const remote = client(server);
    assert.equal((await remote.getManifest("app", img.digest)).mediaType, OCI_MANIFEST);
    await remote.close();
  });

  it("refuses a manifest that cannot be JSON even when its digest matches", async () => {
    const html = Buffer.from("  <html>oops</html>");
    const broken = Buffer.from("{not json");
    let contentType = OCI_MANIFEST;
    const server = await hostile((req, res) => {
      const bytes = req.url?.endsWith(sha256(html)) ? html : broken;
      res.writeHead(200, { "content-type": contentType, "content-length": bytes.length });
      res.end(bytes);
    });
    const remote = client(server);
    await rejectsWith(remote.getManifest("app", sha256(html)), "invalid-response", /not a JSON object/);
    contentType = "application/json"; // the body must say what it is: parsed
    await rejectsWith(remote.getManifest("app", sha256(broken)), "invalid-response", /not JSON/);
    await remote.close();
  });

  it("refuses a huge manifest by its Content-Length without reading it", async () => {
    let written = 0;
    const server = await hostile((_req, res) => {
      res.writeHead(200, { "content-type": OCI_MANIFEST, "content-length": 64 * 1024 * 1024 });
      const chunk = Buffer.alloc(64 * 1024, 32);
      const pump = () => {
        while (written < 64 * 1024 * 1024 && res.write(chunk)) written += chunk.length;
      };
      res.on("drain", pump);
      pump();
    });
    const remote = client(server, { maxManifestBytes: 1024 * 1024 });
    await rejectsWith(remote.getManifest("app", "v1"), "too-large", /67108864 bytes, more than the 1048576/);
    await remote.close();
    assert.ok(written < 16 * 1024 * 1024, `the server could write only what buffers hold (${written})`);
  });

  it("stops reading a huge manifest sent without Content-Length once it passes the limit", async () => {
    let written = 0;
    let closed = false;
    const server = await hostile((_req, res) => {
      res.writeHead(200, { "content-type": OCI_MANIFEST }); // chunked, endless
      const chunk = Buffer.alloc(64 * 1024, 32);
      res.on("close", () => {
        closed = true;
      });
      const pump = () => {
        while (!closed && res.write(chunk)) written += chunk.length;
      };
      res.on("drain", pump);
      pump();
    });
    const remote = client(server, { maxManifestBytes: 1024 * 1024 });
    await rejectsWith(remote.getManifest("app", "v1"), "too-large", /more than the 1048576 bytes/);
    await remote.close();
    assert.ok(written < 32 * 1024 * 1024, `reading stopped (${written} written)`);
  });

  it("ends a blob whose bytes do not hash to its digest with digest-mismatch", async () => {
    const good = blob(4096);
    const bad = Buffer.from(good.bytes);
    bad[100] = (bad[100] as number) ^ 1;
    const server = await hostile((_req, res) => {
      res.writeHead(200, { "content-length": bad.length });
      res.end(bad);
    });
    const remote = client(server);
    const fetched = await remote.getBlob("app", good.digest);
    assert.equal(fetched.size, 4096);
    const err = await rejectsWith(readAll(fetched.body), "digest-mismatch", /the bytes hash to sha256:/);
    assert.ok(!err.message.includes("undefined"));
    await remote.close();
  });

  it("ends a blob cut short with truncated", async () => {
    const good = blob(100_000);
    const server = await hostile((_req, res) => {
      res.writeHead(200, { "content-length": good.bytes.length });
      res.write(good.bytes.subarray(0, 40_000), () => setTimeout(() => res.socket?.destroy(), 20));
    });
    const remote = client(server);
    const fetched = await remote.getBlob("app", good.digest);
    await rejectsWith(readAll(fetched.body), "truncated", /stopped after 40000 of 100000 bytes/);
    await remote.close();
  });

  it("asks HEAD for the size of a blob sent without Content-Length, and refuses one with none", async () => {
    const good = blob(5000);
    let headSize: number | undefined = good.bytes.length;
    const server = await hostile((req, res) => {
      if (req.method === "HEAD") {
        res.writeHead(200, headSize === undefined ? {} : { "content-length": headSize });
        res.end();
        return;
      }
      res.writeHead(200, { "transfer-encoding": "chunked" });
      res.end(good.bytes);
    });
    const remote = client(server);
    const fetched = await remote.getBlob("app", good.digest);
    assert.equal(fetched.size, 5000);
    assert.deepEqual(await readAll(fetched.body), good.bytes);
    headSize = 100;
    const short = await remote.getBlob("app", good.digest);
    await rejectsWith(readAll(short.body), "digest-mismatch", /runs past the 100 bytes/);
    headSize = undefined;
    await rejectsWith(remote.getBlob("app", good.digest), "invalid-response", /no Content-Length/);
    await remote.close();
  });

  it("refuses a blob larger than maxBlobBytes before reading it", async () => {
    const good = blob(5000);
    const server = await hostile((_req, res) => {
      res.writeHead(200, { "content-length": good.bytes.length });
      res.end(good.bytes);
    });
    const remote = client(server, { maxBlobBytes: 4999 });
    await rejectsWith(remote.getBlob("app", good.digest), "too-large", /5000 bytes, more than the 4999/);
    await remote.close();
  });

  it("says invalid-response for garbage lists, referrers and token answers", async () => {
    const server = await hostile((req, res) => {
      if (req.url?.startsWith("/token")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end("<html>");
        return;
      }
      if (req.url?.startsWith("/v2/secure/")) {
        res.writeHead(401, { "www-authenticate": `Bearer realm="http://127.0.0.1:${server.port}/token"` });
        res.end();
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      if (req.url?.includes("/tags/list")) res.end('{"tags": "v1"}');
      else res.end("]]]");
    });
    const remote = client(server);
    await rejectsWith(collect(remote.tags("app")), "invalid-response", /is not a list of names/);
    await rejectsWith(collect(remote.catalog()), "invalid-response", /not JSON/);
    await rejectsWith(remote.referrers("app", img.digest), "invalid-response", /not JSON/);
    await rejectsWith(remote.getManifest("secure", "v1"), "invalid-response", /answered no token/);
    await remote.close();
  });

  it("refuses names and references that are not names before sending anything", async () => {
    const server = await hostile((_req, res) => res.end());
    const remote = client(server);
    await rejectsWith(remote.getManifest("../etc", "v1"), "refused", /not a repository name/);
    await rejectsWith(remote.getManifest("app", "v1/../../x"), "refused", /neither a tag nor a digest/);
    await rejectsWith(remote.getBlob("app", "md5:abc"), "refused", /not supported/);
    await rejectsWith(collect(remote.tags("Bad Name")), "refused");
    assert.equal(server.requests.length, 0);
    await remote.close();
  });
});

describe("remote client against a hostile registry: statuses", () => {
  it("maps statuses and OCI error codes to kinds, quoting the remote briefly", async () => {
    const answers: [number, string, RemoteErrorKind][] = [
      [404, "", "not-found"],
      [400, '{"errors":[{"code":"MANIFEST_UNKNOWN","message":"no such"}]}', "not-found"],
      [403, '{"errors":[{"code":"DENIED","message":"go away"}]}', "denied"],
      [400, '{"errors":[{"code":"QUOTA_EXCEEDED","message":"over quota"}]}', "refused"],
      [503, "busy", "unreachable"],
      [204, "", "invalid-response"],
    ];
    let i = 0;
    const server = await hostile((_req, res) => {
      const [status, body] = answers[i] as [number, string, RemoteErrorKind];
      res.writeHead(status, { "content-type": "application/json" });
      res.end(body);
    });
    const remote = client(server);
    for (; i < answers.length; i++) {
      const [status, , kind] = answers[i] as [number, string, RemoteErrorKind];
      const err = await rejectsWith(remote.getManifest("app", "v1"), kind);
      assert.equal(err.status, status);
    }
    await remote.close();
  });

  it("quotes a long remote message in at most 200 characters, without control characters", async () => {
    const server = await hostile((_req, res) => {
      res.writeHead(400);
      res.end(`bad\r\n\u0000${"x".repeat(5000)}`);
    });
    const remote = client(server);
    const err = await rejectsWith(remote.getManifest("app", "v1"), "refused");
    assert.ok(err.message.length < 400, err.message);
    for (const control of ["\r", "\n", "\u0000"]) assert.ok(!err.message.includes(control), err.message);
    await remote.close();
  });

  it("429: rate-limited with Retry-After; until then no request is sent (fake clock)", async () => {
    let now = Date.parse("2026-11-29T12:00:00Z");
    let limited = true;
    const server = await hostile((_req, res) => {
      if (limited) {
        res.writeHead(429, { "retry-after": "7" });
        res.end();
        return;
      }
      res.writeHead(404);
      res.end();
    });
    const remote = client(server, { clock: { now: () => now } });
    const first = await rejectsWith(remote.getManifest("app", "v1"), "rate-limited", /HTTP 429/);
    assert.equal(first.retryAfterMs, 7000);
    assert.equal(server.requests.length, 1);
    now += 3000;
    const gated = await rejectsWith(
      remote.hasBlob("app", sha256(Buffer.from("x"))),
      "rate-limited",
      /not sent/,
    );
    assert.equal(gated.retryAfterMs, 4000);
    await rejectsWith(collect(remote.tags("app")), "rate-limited");
    assert.equal(server.requests.length, 1, "nothing sent while the gate is closed");
    limited = false;
    now += 4000;
    await rejectsWith(remote.getManifest("app", "v1"), "not-found");
    assert.equal(server.requests.length, 2);
    await remote.close();
  });

  it("429 with an HTTP date, and with none (60 s)", async () => {
    const now = Date.parse("2026-11-29T12:00:00Z");
    let retryAfter: string | undefined = "Sun, 29 Nov 2026 12:00:42 GMT";
    const server = await hostile((_req, res) => {
      res.writeHead(429, retryAfter ? { "retry-after": retryAfter } : {});
      res.end();
    });
    const a = client(server, { clock: { now: () => now } });
    assert.equal((await rejectsWith(a.getManifest("app", "v1"), "rate-limited")).retryAfterMs, 42_000);
    retryAfter = undefined;
    const b = client(server, { clock: { now: () => now } });
    assert.equal((await rejectsWith(b.getManifest("app", "v1"), "rate-limited")).retryAfterMs, 60_000);
    await a.close();
    await b.close();
  });

  it("times out a remote that never answers: unreachable", async () => {
    const server = await hostile(() => undefined);
    const remote = client(server, { timeoutMs: 300 });
    const started = Date.now();
    await rejectsWith(remote.getManifest("app", "v1"), "unreachable", /timed out/);
    assert.ok(Date.now() - started < 5000);
    await remote.close();
  });

  it("a connection refused is unreachable", async () => {
    const server = await hostile(() => undefined);
    await server.close();
    const remote = client(server);
    await rejectsWith(remote.getManifest("app", "v1"), "unreachable");
    await remote.close();
  });
});

describe("remote client against a hostile registry: redirects and addresses", () => {
  const good = blob(1000);

  it("follows a redirect to another origin and drops Authorization there; keeps it on the same origin", async () => {
    const cdn = await hostile((_req, res) => {
      res.writeHead(200, { "content-length": good.bytes.length });
      res.end(good.bytes);
    });
    const registry = await hostile((req, res) => {
      if (!req.headers.authorization) {
        res.writeHead(401, { "www-authenticate": 'Basic realm="r"' });
        res.end();
        return;
      }
      if (req.url?.includes("/blobs/") && !req.url.includes("hop")) {
        res.writeHead(307, { location: `${req.url}?hop=1` });
        res.end();
        return;
      }
      res.writeHead(302, { location: `${cdn.url}/storage/blob?sig=secret` });
      res.end();
    });
    const remote = client(registry, { credentials: { username: "alice", password: "pa55word" } });
    const fetched = await remote.getBlob("app", good.digest);
    assert.deepEqual(await readAll(fetched.body), good.bytes);
    assert.equal(registry.requests.at(-1)?.url.includes("hop=1"), true);
    assert.ok(registry.requests.at(-1)?.headers.authorization, "same origin: credentials kept");
    assert.equal(cdn.requests.length, 1);
    assert.equal(cdn.requests[0]?.headers.authorization, undefined, "another origin: no credentials");
    await remote.close();
  });

  it("refuses a redirect to the metadata address, naming it", async () => {
    const server = await hostile((_req, res) => {
      res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/iam" });
      res.end();
    });
    const remote = client(server);
    const err = await rejectsWith(remote.getBlob("app", good.digest), "address-refused");
    assert.match(
      err.message,
      /redirected to http:\/\/169\.254\.169\.254\): 169\.254\.169\.254 is a cloud metadata address/,
    );
    assert.match(err.message, /--events-sink-allow/);
    await remote.close();
  });

  it("refuses a redirect to a name that resolves to the metadata address, naming it", async () => {
    const server = await hostile((_req, res) => {
      res.writeHead(302, { location: "http://metadata.test/latest" });
      res.end();
    });
    const resolve = fakeSinkResolver({ "metadata.test": ["169.254.169.254"] });
    const remote = client(server, { resolve });
    const err = await rejectsWith(remote.getBlob("app", good.digest), "address-refused");
    assert.match(err.message, /host metadata\.test resolves to 169\.254\.169\.254, a cloud metadata address/);
    assert.doesNotMatch(err.message, /webhook|sink host/);
    assert.deepEqual(resolve.calls, ["metadata.test"]);
    await remote.close();
  });

  it("never connects to a refused address a redirect names (a listener there sees no connection)", async () => {
    const forbidden = await hostile((_req, res) => res.end("secret"), "127.0.0.2");
    const server = await hostile((_req, res) => {
      res.writeHead(302, { location: `${forbidden.url}/x` });
      res.end();
    });
    const byName = await hostile((_req, res) => {
      res.writeHead(302, { location: `http://inside.test:${forbidden.port}/x` });
      res.end();
    });
    const resolve = fakeSinkResolver({ "inside.test": ["127.0.0.2"] });
    for (const start of [server, byName]) {
      const remote = client(start, { policy: ONLY_127_0_0_1, resolve });
      await rejectsWith(
        remote.getBlob("app", good.digest),
        "address-refused",
        /127\.0\.0\.2.*a loopback address/,
      );
      await remote.close();
    }
    assert.equal(forbidden.connections(), 0);
  });

  it("refuses the registry URL itself on a refused address, plain http without allowHttp, and malformed URLs, sending nothing", async () => {
    const server = await hostile((_req, res) => res.end());
    const cases: [Partial<RemoteRegistryOptions>, RegExp][] = [
      [
        { policy: createSinkAddressPolicy({ allow: [], allowLoopback: false }) },
        /127\.0\.0\.1 is a loopback address.*--events-allow-loopback/,
      ],
      [{ allowHttp: false }, /plain http.*--events-allow-http/],
      [{ url: server.url.replace("http://", "http://user:pw@") }, /not a registry URL/],
      [{ url: `${server.url}/?x=1` }, /not a registry URL/],
      [{ url: "ftp://127.0.0.1/" }, /not a registry URL/],
      [{ url: `${server.url}/Bad Prefix` }, /not a registry URL/],
    ];
    for (const [extra, message] of cases) {
      const remote = client(server, extra);
      const err = await rejectsWith(remote.getManifest("app", "v1"), "address-refused", message);
      assert.doesNotMatch(err.message, /pw/);
      await remote.close();
    }
    assert.equal(server.requests.length, 0);
    assert.equal(server.connections(), 0);
  });

  it("gives up after 5 redirects", async () => {
    const server = await hostile((req, res) => {
      const n = Number(new URL(req.url ?? "/", "http://x").searchParams.get("n") ?? "0");
      res.writeHead(302, { location: `/v2/app/blobs/${good.digest}?n=${n + 1}` });
      res.end();
    });
    const remote = client(server);
    await rejectsWith(remote.getBlob("app", good.digest), "invalid-response", /more than 5 redirects/);
    assert.equal(server.requests.length, 6);
    const loop = await hostile((req, res) => {
      res.writeHead(302, { location: req.url?.includes("a") ? "/b" : "/a" });
      res.end();
    });
    const looping = client(loop);
    await rejectsWith(looping.getBlob("app", good.digest), "invalid-response", /more than 5 redirects/);
    await remote.close();
    await looping.close();
  });

  it("refuses a token realm on a refused address", async () => {
    for (const realm of ["http://169.254.169.254/token", "http://metadata.test/token"]) {
      const server = await hostile((_req, res) => {
        res.writeHead(401, { "www-authenticate": `Bearer realm="${realm}",service="x"` });
        res.end();
      });
      const resolve = fakeSinkResolver({ "metadata.test": ["169.254.169.254"] });
      const remote = client(server, { resolve, credentials: { username: "u", password: "secretpw" } });
      const err = await rejectsWith(remote.getManifest("app", "v1"), "address-refused", /169\.254\.169\.254/);
      assert.match(err.message, /^token for manifest app:v1/);
      assert.equal(server.requests.length, 1);
      await remote.close();
    }
  });
});

describe("remote client: auth", () => {
  it("Bearer: one token per scope, reused until expires_in, then fetched again (fake clock)", async () => {
    let now = Date.parse("2026-11-29T12:00:00Z");
    let issued = 0;
    const server = await hostile((req, res) => {
      if (req.url?.startsWith("/token")) {
        issued++;
        const scope = new URL(req.url, "http://x").searchParams.getAll("scope").join(" ");
        assert.equal(req.headers.authorization, `Basic ${Buffer.from("bob:hunter22").toString("base64")}`);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ token: `t${issued}|${scope}`, expires_in: 120 }));
        return;
      }
      const auth = req.headers.authorization ?? "";
      if (!auth.startsWith("Bearer t")) {
        res.writeHead(401, {
          "www-authenticate": `Bearer realm="http://127.0.0.1:${server.port}/token",service="reg",scope="repository:app:pull"`,
        });
        res.end();
        return;
      }
      res.writeHead(404);
      res.end();
    });
    const remote = client(server, {
      clock: { now: () => now },
      credentials: { username: "bob", password: "hunter22" },
    });
    await rejectsWith(remote.getManifest("app", "v1"), "not-found");
    await rejectsWith(remote.getManifest("app", "v2"), "not-found");
    assert.equal(issued, 1, "the token is reused for the same scope");
    assert.equal(
      server.requests.filter((r) => r.url.startsWith("/v2/")).length,
      3,
      "challenge once, then straight",
    );
    await rejectsWith(remote.getManifest("other", "v1"), "not-found");
    assert.equal(issued, 2, "another scope, another token (fetched ahead: the realm is known)");
    assert.equal(server.requests.filter((r) => r.url.startsWith("/v2/other")).length, 1);
    now += 121_000;
    await rejectsWith(remote.getManifest("app", "v1"), "not-found");
    assert.equal(issued, 3, "expired: fetched again");
    await remote.close();
  });

  it("Bearer without credentials asks the realm anonymously; access_token is accepted", async () => {
    const server = await hostile((req, res) => {
      if (req.url?.startsWith("/token")) {
        assert.equal(req.headers.authorization, undefined);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ access_token: "anon" }));
        return;
      }
      if (req.headers.authorization !== "Bearer anon") {
        res.writeHead(401, { "www-authenticate": `Bearer realm="http://127.0.0.1:${server.port}/token"` });
        res.end();
        return;
      }
      res.writeHead(404);
      res.end();
    });
    const remote = client(server);
    await rejectsWith(remote.getManifest("app", "v1"), "not-found");
    await remote.close();
  });

  it("tries once after a challenge: a second 401 is unauthorized", async () => {
    const server = await hostile((_req, res) => {
      res.writeHead(401, { "www-authenticate": 'Basic realm="x"' });
      res.end();
    });
    const remote = client(server, { credentials: { username: "u", password: "wrongpass" } });
    await rejectsWith(remote.getManifest("app", "v1"), "unauthorized", /refused the credentials/);
    assert.equal(server.requests.length, 2);
    const anonymous = client(server);
    await rejectsWith(anonymous.getManifest("app", "v1"), "unauthorized", /none are configured/);
    await remote.close();
    await anonymous.close();
  });

  it("never puts the password, nor its Basic form, in an error, even when the remote echoes them", async () => {
    const password = "Sup3r-Secret!";
    const basic = Buffer.from(`alice:${password}`).toString("base64");
    const server = await hostile((req, res) => {
      const echo = `you sent ${req.headers.authorization ?? "nothing"} = ${password}`;
      if (req.url?.startsWith("/token")) {
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ errors: [{ code: "UNAUTHORIZED", message: echo }] }));
        return;
      }
      if (req.url?.includes("/bearer/")) {
        res.writeHead(401, { "www-authenticate": `Bearer realm="http://127.0.0.1:${server.port}/token"` });
        res.end(echo);
        return;
      }
      res.writeHead(req.headers.authorization ? 403 : 401, { "www-authenticate": 'Basic realm="x"' });
      res.end(JSON.stringify({ errors: [{ code: "DENIED", message: echo }] }));
    });
    const remote = client(server, { credentials: { username: "alice", password } });
    const errors = [
      await rejectsWith(remote.getManifest("basic/app", "v1"), "denied"),
      await rejectsWith(
        remote.getManifest("bearer/app", "v1"),
        "unauthorized",
        /token service refused the credentials/,
      ),
    ];
    for (const err of errors) {
      assert.ok(!err.message.includes(password), err.message);
      assert.ok(!err.message.includes(basic), err.message);
      assert.ok(!String(err.stack).includes(password));
      assert.match(err.message, /\*\*\*/);
    }
    await remote.close();
  });

  it("does not send a streamed body twice: a 401 on a PUT with a stream is unauthorized", async () => {
    const b = blob(100);
    const server = await hostile((req, res) => {
      if (req.method === "POST") {
        res.writeHead(202, { location: "/v2/app/blobs/uploads/1" });
        res.end();
        return;
      }
      req.resume();
      res.writeHead(401, { "www-authenticate": 'Basic realm="x"' });
      res.end();
    });
    const remote = client(server, { credentials: { username: "u", password: "p4ssword" } });
    const { Readable } = await import("node:stream");
    await rejectsWith(
      remote.pushBlob("app", b.digest, 100, Readable.from([b.bytes])),
      "unauthorized",
      /cannot be sent again/,
    );
    assert.equal(server.requests.filter((r) => r.method === "PUT").length, 1);
    await remote.close();
  });
});

describe("remote client: uploads, mounts and referrers", () => {
  it("mountBlob: 201 is true; 202 cancels the upload it opened and is false", async () => {
    let mount = 201;
    const server = await hostile((req, res) => {
      if (req.method === "POST") {
        res.writeHead(mount, { location: "/v2/app/blobs/uploads/abc?_state=s" });
        res.end();
        return;
      }
      res.writeHead(204);
      res.end();
    });
    const remote = client(server);
    const digest = sha256(Buffer.from("x"));
    assert.equal(await remote.mountBlob("app", digest, "base/lib"), true);
    const post = server.requests[0];
    assert.equal(post?.url, `/v2/app/blobs/uploads/?mount=${encodeURIComponent(digest)}&from=base%2Flib`);
    mount = 202;
    assert.equal(await remote.mountBlob("app", digest, "base/lib"), false);
    assert.deepEqual(
      server.requests.slice(1).map((r) => `${r.method} ${r.url}`),
      [`POST ${post?.url}`, "DELETE /v2/app/blobs/uploads/abc?_state=s"],
    );
    await remote.close();
  });

  it("pushBlob: POST, then PUT ?digest= with the whole body and its Content-Length", async () => {
    const b = blob(3000);
    let received: Buffer = Buffer.alloc(0);
    const server = await hostile(async (req, res) => {
      if (req.method === "POST") {
        res.writeHead(202, { location: "/v2/app/blobs/uploads/u1?_state=abc" });
        res.end();
        return;
      }
      assert.equal(req.headers["content-length"], "3000");
      received = await readAll(req);
      res.writeHead(201);
      res.end();
    });
    const remote = client(server);
    const { Readable } = await import("node:stream");
    await remote.pushBlob(
      "app",
      b.digest,
      3000,
      Readable.from([b.bytes.subarray(0, 1000), b.bytes.subarray(1000)]),
    );
    assert.deepEqual(received, b.bytes);
    assert.equal(
      server.requests[1]?.url,
      `/v2/app/blobs/uploads/u1?_state=abc&digest=${encodeURIComponent(b.digest)}`,
    );
    await remote.close();
  });

  it("pushBlob: a failure of the caller's stream is rethrown as is, not blamed on the remote", async () => {
    const server = await hostile((req, res) => {
      if (req.method === "POST") {
        res.writeHead(202, { location: "/v2/app/blobs/uploads/u2" });
        res.end();
        return;
      }
      req.resume();
      req.on("end", () => {
        res.writeHead(201);
        res.end();
      });
    });
    const remote = client(server);
    const { Readable } = await import("node:stream");
    const failing = new Readable({
      read() {
        this.push(Buffer.alloc(100));
        this.destroy(new Error("local disk read failed"));
      },
    });
    await assert.rejects(
      remote.pushBlob("app", sha256(Buffer.alloc(1000)), 1000, failing),
      /local disk read failed/,
    );
    assert.equal(server.requests[0]?.headers["user-agent"], "wharf-remote-registry-client");
    await remote.close();
  });

  it("referrers: the API's index when offered, else the fallback tag's, else none", async () => {
    const subject = sha256(Buffer.from("subject"));
    const descriptor = {
      mediaType: OCI_MANIFEST,
      digest: sha256(Buffer.from("sig")),
      size: 10,
      artifactType: "application/x",
    };
    const list = Buffer.from(JSON.stringify({ schemaVersion: 2, manifests: [descriptor] }));
    let api = true;
    let fallback = true;
    const server = await hostile((req, res) => {
      if (req.url?.includes("/referrers/")) {
        res.writeHead(api ? 200 : 404, { "content-type": "application/vnd.oci.image.index.v1+json" });
        res.end(api ? list : "");
        return;
      }
      if (fallback && req.url?.endsWith(`/manifests/sha256-${subject.slice(7)}`)) {
        res.writeHead(200, { "content-type": "application/vnd.oci.image.index.v1+json" });
        res.end(list);
        return;
      }
      res.writeHead(404);
      res.end();
    });
    const remote = client(server);
    assert.deepEqual(await remote.referrers("app", subject), [descriptor]);
    api = false;
    assert.deepEqual(await remote.referrers("app", subject), [descriptor]);
    fallback = false;
    assert.deepEqual(await remote.referrers("app", subject), []);
    await remote.close();
  });

  it("tags: follows Link pages on the same origin; refuses a next page elsewhere and pages that loop", async () => {
    let mode: "ok" | "elsewhere" | "loop" = "ok";
    const server = await hostile((req, res) => {
      const last = new URL(req.url ?? "/", "http://x").searchParams.get("last");
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (mode === "elsewhere") headers.link = '<http://127.0.0.2:1/v2/app/tags/list?last=b>; rel="next"';
      else if (mode === "loop") headers.link = '</v2/app/tags/list?last=b>; rel="next"';
      else if (!last) headers.link = '</v2/app/tags/list?last=b&n=2>; rel="next"';
      res.writeHead(200, headers);
      res.end(JSON.stringify({ name: "app", tags: last ? ["c"] : ["a", "b"] }));
    });
    const remote = client(server, { pageSize: 2 });
    assert.deepEqual(await collect(remote.tags("app")), ["a", "b", "c"]);
    assert.equal(server.requests[0]?.url, "/v2/app/tags/list?n=2");
    mode = "elsewhere";
    await rejectsWith(collect(remote.tags("app")), "invalid-response", /another host/);
    mode = "loop";
    await rejectsWith(collect(remote.tags("app")), "invalid-response", /do not end/);
    await remote.close();
  });

  it("a URL prefix is a namespace: repos below it, and a catalog filtered to it", async () => {
    const server = await hostile((req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      if (req.url?.startsWith("/v2/_catalog"))
        res.end(JSON.stringify({ repositories: ["team/a", "team/b/c", "teamx/d", "e"] }));
      else res.end(JSON.stringify({ name: "team/a", tags: null }));
    });
    const remote = client({ url: `${server.url}/team/` });
    assert.equal(remote.url, `${server.url}/team`);
    assert.deepEqual(await collect(remote.catalog()), ["a", "b/c"]);
    assert.deepEqual(await collect(remote.tags("a")), []);
    assert.equal(server.requests.at(-1)?.url, "/v2/team/a/tags/list");
    await remote.close();
  });
});

describe("remote client: concurrency, cancellation, HEAD", () => {
  it("20 concurrent calls that meet the same Bearer challenge share one token request", async () => {
    let issued = 0;
    const server = await hostile((req, res) => {
      if (req.url?.startsWith("/token")) {
        issued++;
        setTimeout(() => {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({ token: "shared", expires_in: 300 }));
        }, 50);
        return;
      }
      if (req.headers.authorization !== "Bearer shared") {
        res.writeHead(401, {
          "www-authenticate": `Bearer realm="http://127.0.0.1:${server.port}/token",service="s"`,
        });
        res.end();
        return;
      }
      res.writeHead(404);
      res.end();
    });
    const remote = client(server);
    const kinds = await Promise.all(
      Array.from({ length: 20 }, () => remote.getManifest("app", "v1").catch((e: RemoteError) => e.kind)),
    );
    assert.deepEqual(new Set(kinds), new Set(["not-found"]));
    assert.equal(issued, 1);
    await remote.close();
  });

  it("an aborted signal ends the call at once with its reason", async () => {
    const server = await hostile(() => undefined);
    const remote = client(server, { timeoutMs: 60_000 });
    const controller = new AbortController();
    const call = remote.getManifest("app", "v1", controller.signal);
    setTimeout(() => controller.abort(new Error("caller gave up")), 50);
    await assert.rejects(call, /caller gave up/);
    await remote.close();
  });

  it("aborting mid-blob ends the body with the abort reason, not as truncated", async () => {
    const big = blob(200_000);
    const server = await hostile((_req, res) => {
      res.writeHead(200, { "content-length": big.bytes.length });
      res.write(big.bytes.subarray(0, 1000)); // then nothing
    });
    const remote = client(server, { timeoutMs: 60_000 });
    const controller = new AbortController();
    const fetched = await remote.getBlob("app", big.digest, controller.signal);
    setTimeout(() => controller.abort(new Error("caller gave up")), 50);
    await assert.rejects(readAll(fetched.body), /caller gave up/);
    await remote.close();
  });

  it("a caller waiting on another's token request stops waiting when it aborts", async () => {
    const server = await hostile((req, res) => {
      if (req.url?.startsWith("/token")) return; // never answers
      res.writeHead(401, { "www-authenticate": `Bearer realm="http://127.0.0.1:${server.port}/token"` });
      res.end();
    });
    const remote = client(server, { timeoutMs: 60_000 });
    const first = remote.getManifest("app", "v1").catch((e: unknown) => e);
    const controller = new AbortController();
    const second = remote.getManifest("app", "v1", controller.signal);
    setTimeout(() => controller.abort(new Error("second gave up")), 100);
    await assert.rejects(second, /second gave up/);
    await server.close(); // ends the token request still under way
    assert.ok((await first) instanceof RemoteError);
    await remote.close();
  });

  it("headManifest: reads the HEAD's headers; asks the manifest itself when they say too little", async () => {
    const img = image([10]);
    let full = true;
    const server = await hostile((req, res) => {
      if (req.method === "HEAD" && full) {
        res.writeHead(200, {
          "content-type": img.mediaType,
          "content-length": img.manifest.length,
          "docker-content-digest": img.digest,
        });
        res.end();
        return;
      }
      res.writeHead(200, { "content-type": req.method === "HEAD" ? "application/json" : img.mediaType });
      res.end(req.method === "HEAD" ? undefined : img.manifest);
    });
    const remote = client(server);
    const expected = { digest: img.digest, mediaType: img.mediaType, size: img.manifest.length };
    assert.deepEqual(await remote.headManifest("app", "v1"), expected);
    assert.equal(server.requests.length, 1);
    full = false;
    assert.deepEqual(await remote.headManifest("app", "v1"), expected);
    assert.deepEqual(
      server.requests.slice(1).map((r) => r.method),
      ["HEAD", "GET"],
    );
    await remote.close();
  });
});
