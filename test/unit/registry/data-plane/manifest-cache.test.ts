import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { ManifestCache } from "../../../../src/registry/data-plane/manifest-cache.js";
import { startTestServer, type TestServer } from "../../../support/wharf-server.js";

const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
const sha256 = (data: string | Uint8Array) => `sha256:${createHash("sha256").update(data).digest("hex")}`;
const entry = (digest: string, bytes: number) => ({
  digest,
  mediaType: OCI_MANIFEST,
  content: new Uint8Array(bytes),
});

describe("ManifestCache", () => {
  it("evicts the least recently used entry past its entry bound", () => {
    const cache = new ManifestCache(2, 1000);
    cache.set("r", entry("a", 1));
    cache.set("r", entry("b", 1));
    assert.ok(cache.get("r", "a"), "a is cached");
    cache.set("r", entry("c", 1));
    assert.equal(cache.get("r", "b"), undefined, "b, least recently used, was evicted");
    assert.ok(cache.get("r", "a"), "a stays");
    assert.ok(cache.get("r", "c"), "c stays");
    assert.equal(cache.size, 2, "two entries");
  });

  it("keeps its bytes under the byte bound and skips bodies larger than it", () => {
    const cache = new ManifestCache(100, 10);
    cache.set("r", entry("a", 6));
    cache.set("r", entry("b", 6));
    assert.equal(cache.get("r", "a"), undefined, "a was evicted for bytes");
    assert.equal(cache.bytes, 6, "only b's bytes are counted");
    cache.set("r", entry("big", 11));
    assert.equal(cache.get("r", "big"), undefined, "a body over the bound is not cached");
    assert.equal(cache.bytes, 6, "bytes unchanged");
  });

  it("keys by repo and digest, and forgets one entry", () => {
    const cache = new ManifestCache();
    cache.set("r1", entry("a", 3));
    cache.set("r2", entry("a", 4));
    cache.set("r1", entry("a", 5));
    assert.equal(cache.bytes, 9, "replacing an entry recounts its bytes");
    cache.forget("r1", "a");
    assert.equal(cache.get("r1", "a"), undefined, "r1's entry is gone");
    assert.equal(cache.get("r2", "a")?.content.byteLength, 4, "r2's entry stays");
    assert.equal(cache.bytes, 4, "bytes follow the removal");
  });
});

describe("manifest GET with the cache", () => {
  let server: TestServer;
  let token: string;
  let repoUid: string;
  const name = "cachetest/app";
  const config = Buffer.from('{"architecture":"amd64","os":"linux"}');
  const layer = Buffer.from("layer bytes\n".repeat(50));

  const registry = (path: string, init: Parameters<TestServer["registry"]>[1] = {}) =>
    server.registry(path, { token, ...init });

  function manifest(title: string): Buffer {
    return Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: sha256(config), size: 11 },
        layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar", digest: sha256(layer), size: 600 }],
        annotations: { "org.opencontainers.image.title": title },
      }),
    );
  }

  async function put(reference: string, body: Buffer): Promise<string> {
    const res = await registry(`/v2/${name}/manifests/${reference}`, {
      method: "PUT",
      headers: { "content-type": OCI_MANIFEST },
      body,
    });
    assert.equal(res.status, 201, await res.text());
    return res.headers.get("docker-content-digest") as string;
  }

  async function get(reference: string): Promise<{ status: number; body: Buffer; digest: string | null }> {
    const res = await registry(`/v2/${name}/manifests/${reference}`, { headers: { accept: OCI_MANIFEST } });
    return {
      status: res.status,
      body: Buffer.from(await res.arrayBuffer()),
      digest: res.headers.get("docker-content-digest"),
    };
  }

  before(async () => {
    server = await startTestServer();
    token = await server.registryToken();
    await server.create("/iam/v2/groups", { name: "cachetest" });
    for (const bytes of [config, layer]) {
      const res = await registry(`/v2/${name}/blobs/uploads/?digest=${sha256(bytes)}`, {
        method: "POST",
        headers: { "content-type": "application/octet-stream" },
        body: bytes,
      });
      assert.equal(res.status, 201, await res.text());
    }
    const repo = await server.store.repos.getByName(
      (await server.store.groups.getByName("", "cachetest"))?.uid as string,
      "app",
    );
    repoUid = repo?.uid as string;
    assert.ok(repoUid, "the push created the repo");
  });
  after(() => server?.close());

  it("serves a moved tag's new manifest at once, through the registry and through the API", async () => {
    const one = manifest("one");
    const two = manifest("two");
    const d1 = await put("moving", one);
    for (let i = 0; i < 3; i++) assert.deepEqual((await get("moving")).body, one, "tag serves one");
    const d2 = await put("moving", two);
    assert.deepEqual((await get("moving")).body, two, "a registry push moves the tag at once");
    assert.equal((await get("moving")).digest, d2, "with the new digest");
    const res = await server.api(`/registry/v2/tags/${repoUid}`, {
      method: "POST",
      token: server.adminToken,
      body: { name: "moving", digest: d1 },
    });
    assert.equal(res.status, 200, await res.text());
    assert.deepEqual((await get("moving")).body, one, "an API tag move is seen at once");
  });

  it("no longer serves a manifest deleted by digest, by digest or by its tag", async () => {
    const body = manifest("deleted");
    const digest = await put("doomed", body);
    assert.deepEqual((await get("doomed")).body, body, "served by tag (now cached)");
    assert.deepEqual((await get(digest)).body, body, "served by digest");
    const del = await registry(`/v2/${name}/manifests/${digest}`, { method: "DELETE" });
    assert.equal(del.status, 202, await del.text());
    assert.equal((await get(digest)).status, 404, "gone by digest");
    assert.equal((await get("doomed")).status, 404, "gone by tag");
  });

  it("no longer serves a manifest another process deleted while this one had it cached", async () => {
    const body = manifest("elsewhere");
    const digest = await put("other-process", body);
    assert.deepEqual((await get("other-process")).body, body, "served by tag (now cached)");
    assert.deepEqual((await get(digest)).body, body, "served by digest");
    // What another process's DELETE does, straight in the store: this process's cache never hears of it.
    const tag = await server.store.tags.getByName(repoUid, "other-process");
    await server.store.transaction(async (tx) => {
      assert.ok(await tx.manifests.delete(repoUid, digest), "the row was deleted");
      if (tag) await tx.tags.delete(tag.uid, Date.now());
    });
    assert.equal((await get(digest)).status, 404, "gone by digest");
    assert.equal((await get("other-process")).status, 404, "gone by tag");
  });
});
