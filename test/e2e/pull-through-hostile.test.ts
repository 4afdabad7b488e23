import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readdir } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, it } from "node:test";
import { secretBoxOf } from "../../src/core/secret-box.js";
import { newChildUid } from "../../src/core/uidp.js";
import { onOneEngine } from "../support/databases.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
const PASSWORD = "hunter2-never-shown";

const sha256 = (bytes: Buffer | string) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

/** A manifest naming `layer` (its bytes) as its one layer. */
function manifestOf(layer: Buffer): Buffer {
  return Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: sha256("{}"), size: 2 },
      layers: [
        { mediaType: "application/vnd.oci.image.layer.v1.tar", digest: sha256(layer), size: layer.length },
      ],
    }),
  );
}

const LAYER = Buffer.alloc(64 * 1024, "x");
const GOOD = manifestOf(LAYER);

/**
 * An upstream that misbehaves by repository name: `good/*` answers honestly; `wrongdigest` sends
 * other bytes than its Docker-Content-Digest (and other blob bytes than asked for); `truncated`
 * closes blob bodies half way; `huge` sends a 5 MiB manifest; `metadata` redirects blobs to
 * 169.254.169.254.
 */
async function hostileUpstream(): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const m = /^\/v2\/([^/]+)\/[^/]+\/(manifests|blobs)\/([^/?]+)/.exec(req.url ?? "");
    if (req.url === "/v2/") return void res.writeHead(200, { "content-length": 0 }).end();
    if (!m) return void res.writeHead(404, { "content-length": 0 }).end();
    const [, mode, kind, reference] = m as unknown as [string, string, string, string];
    const send = (status: number, headers: Record<string, string | number>, body?: Buffer) => {
      res.writeHead(status, headers);
      res.end(req.method === "HEAD" ? undefined : body);
    };
    if (kind === "manifests") {
      if (mode === "huge") {
        const huge = Buffer.concat([
          Buffer.from('{"schemaVersion":2,"x":"'),
          Buffer.alloc(5 * 1024 * 1024, "a"),
          Buffer.from('"}'),
        ]);
        return send(200, { "content-type": OCI_MANIFEST, "content-length": huge.length }, huge);
      }
      const body = mode === "wrongdigest" ? manifestOf(Buffer.from("other layer")) : GOOD;
      return send(
        200,
        {
          "content-type": OCI_MANIFEST,
          "content-length": body.length,
          "docker-content-digest": sha256(GOOD),
        },
        body,
      );
    }
    if (mode === "metadata") {
      return send(307, {
        location: `http://169.254.169.254/latest/meta-data/${reference}`,
        "content-length": 0,
      });
    }
    if (mode === "truncated") {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": LAYER.length });
      res.write(LAYER.subarray(0, LAYER.length / 2));
      setTimeout(() => res.destroy(), 20);
      return;
    }
    const bytes = mode === "wrongdigest" ? Buffer.alloc(LAYER.length, "y") : LAYER;
    return send(200, { "content-type": "application/octet-stream", "content-length": bytes.length }, bytes);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Every file under `dir`, as paths relative to it. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

onOneEngine("pull-through cache against a hostile upstream", () => {
  let wharf: TestServer;
  let upstream: Awaited<ReturnType<typeof hostileUpstream>>;
  let token: string;
  let acmeUid: string;
  const layer = sha256(LAYER);

  before(async () => {
    upstream = await hostileUpstream();
    wharf = await startTestServer({ config: { eventsAllowLoopback: "true", eventsAllowHttp: "true" } });
    token = await wharf.registryToken();
    acmeUid = await wharf.create("/iam/v2/groups", { name: "acme" });
    const acme = acmeUid;
    const now = Date.now();
    await wharf.store.upstreams.insert({
      uid: newChildUid(acme),
      orgUid: acme,
      name: "evil",
      url: upstream.url,
      username: "someone",
      passwordSealed: await secretBoxOf(wharf.store.settings).seal(PASSWORD),
      tagTtlMs: 60_000,
      createTime: now,
      updateTime: now,
    });
  });
  after(async () => {
    await wharf?.close();
    await upstream?.close();
  });

  const get = (path: string) => wharf.registry(path, { token, headers: { accept: OCI_MANIFEST } });
  async function errorOf(res: Response): Promise<string> {
    const text = await res.text();
    assert.ok(!text.includes(PASSWORD), "the upstream's password never shows");
    return text;
  }
  async function nothingStored(digest: string) {
    assert.equal(await wharf.store.blobs.get(digest), undefined, `${digest} has no blob row`);
    const hex = digest.slice("sha256:".length);
    const files = await filesUnder(join(wharf.dataDir, "blobs"));
    assert.deepEqual(
      files.filter((f) => f.includes(hex) || f.includes("uploads")),
      [],
      "no blob file and no upload left",
    );
  }

  it("an honest answer is served and stored (the harness works)", async () => {
    const res = await get("/v2/acme/evil/good/app/manifests/v1");
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get("docker-content-digest"), sha256(GOOD));
    const blob = await get(`/v2/acme/evil/good/app/blobs/${layer}`);
    assert.equal(blob.status, 200);
    assert.equal(sha256(Buffer.from(await blob.arrayBuffer())), layer);
    // The answer ends once the bytes are verified; the blob is linked when its store write commits.
    const deadline = Date.now() + 10_000;
    while (!(await wharf.store.blobs.get(layer))) {
      assert.ok(Date.now() < deadline, "the honest blob is stored");
      await new Promise((r) => setTimeout(r, 20));
    }
  });

  it("a manifest whose bytes do not match its digest is 502 and stores nothing", async () => {
    const res = await get("/v2/acme/evil/wrongdigest/app/manifests/v1");
    assert.equal(res.status, 502);
    assert.match(await errorOf(res), /acme\/evil/);
    const res2 = await get(`/v2/acme/evil/wrongdigest/app/manifests/${sha256(GOOD)}`);
    assert.equal(res2.status, 502);
    await errorOf(res2);
    const evil = await wharf.store.groups.getByName(acmeUid, "evil");
    assert.ok(evil, "created by the honest pull");
    assert.equal(
      await wharf.store.groups.getByName(evil.uid, "wrongdigest"),
      undefined,
      "nothing was recorded",
    );
  });

  it("a huge manifest is 502 and stores nothing", async () => {
    const res = await get("/v2/acme/evil/huge/app/manifests/v1");
    assert.equal(res.status, 502);
    assert.match(await errorOf(res), /too large|limit|bytes/i);
  });

  it("a blob redirected to the metadata address is 502, never fetched, and stores nothing", async () => {
    const digest = sha256("metadata blob");
    const res = await get(`/v2/acme/evil/metadata/app/blobs/${digest}`);
    assert.equal(res.status, 502);
    assert.match(await errorOf(res), /169\.254\.169\.254|address|refused/i);
    await nothingStored(digest);
  });

  for (const mode of ["wrongdigest", "truncated"]) {
    it(`a ${mode} blob aborts the answer and stores nothing`, async () => {
      const digest =
        mode === "wrongdigest"
          ? sha256(Buffer.alloc(LAYER.length, "z"))
          : sha256(Buffer.alloc(LAYER.length, "t"));
      const res = await get(`/v2/acme/evil/${mode}/app/blobs/${digest}`);
      if (res.status === 200) {
        const read = await res.arrayBuffer().then(
          (b) => Buffer.from(b),
          (e: Error) => e,
        );
        assert.ok(
          read instanceof Error || sha256(read) !== digest,
          "the client never gets a complete wrong blob",
        );
        if (!(read instanceof Error)) assert.notEqual(read.length, LAYER.length);
      } else {
        assert.equal(res.status, 502);
        await errorOf(res);
      }
      await nothingStored(digest);
    });
  }

  it("no log line carries the upstream's password", () => {
    for (const line of wharf.logLines) assert.ok(!JSON.stringify(line).includes(PASSWORD));
  });
});
