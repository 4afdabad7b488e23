import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, beforeEach, it } from "node:test";
import type { Clock } from "../../../../src/core/clock.js";
import { newRootUid } from "../../../../src/core/uidp.js";
import { createEventRecorder } from "../../../../src/events/event-recorder.js";
import { toOciError } from "../../../../src/oci/oci-errors.js";
import { type BlobUploads, createBlobUploads } from "../../../../src/registry/data-plane/blob-uploads.js";
import { checkIntegrity } from "../../../../src/registry/data-plane/integrity-check.js";
import {
  createRegistryContent,
  type RegistryContent,
} from "../../../../src/registry/data-plane/registry-content.js";
import { createRepoResolver, type RepoResolver } from "../../../../src/registry/data-plane/repo-resolver.js";
import { parseDigest } from "../../../../src/registry/digest.js";
import {
  type CachedPull,
  createPullThrough,
  type PullThrough,
} from "../../../../src/registry/pull-through/pull-through.js";
import type {
  UpstreamConfig,
  UpstreamDirectory,
} from "../../../../src/registry/upstreams/upstream-directory.js";
import type { BlobDriver } from "../../../../src/storage/blobs/blob-driver.js";
import { blobKey } from "../../../../src/storage/blobs/blob-layout.js";
import { createMemoryBlobDriver } from "../../../../src/storage/blobs/memory/memory-blob-driver.js";
import type { Store } from "../../../../src/storage/store.js";
import { forEachEngine } from "../../../support/databases.js";
import { createFakeUpstream, type FakeUpstream } from "./fake-upstream.js";

const TTL = 60_000;

function manualClock(start: number): Clock & { advance(ms: number): void } {
  let now = start;
  return { now: () => now, advance: (ms) => (now += ms) };
}

/** A stand-in directory: `acme/hub/<path>` is upstream `hub` of org `acme`. */
function directory(upstream: () => UpstreamConfig): UpstreamDirectory {
  return {
    async lookup(name) {
      const u = upstream();
      const prefix = `${u.orgName}/${u.name}/`;
      return name.startsWith(prefix) && name.length > prefix.length
        ? { upstream: u, path: name.slice(prefix.length) }
        : undefined;
    },
    async byName(org, name) {
      const u = upstream();
      return org === u.orgName && name === u.name ? u : undefined;
    },
  };
}

/** Collects what is written to it; `gone` after `cutAfter` bytes (a client that disconnects). */
function sink(cutAfter?: number) {
  const chunks: Buffer[] = [];
  let size: number | undefined;
  const out = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(chunk as Buffer);
      if (cutAfter !== undefined && Buffer.concat(chunks).length >= cutAfter) {
        cb();
        out.destroy();
        return;
      }
      cb();
    },
  });
  return {
    answer: (n: number) => {
      size = n;
      return out;
    },
    out,
    bytes: () => Buffer.concat(chunks),
    size: () => size,
    finished: () =>
      new Promise<boolean>((r) =>
        out.writableFinished || out.destroyed
          ? r(out.writableFinished)
          : out.once("close", () => r(out.writableFinished)),
      ),
  };
}

forEachEngine("pull-through cache", (db) => {
  let store: Store;
  let blobs: BlobDriver;
  let content: RegistryContent;
  let uploads: BlobUploads;
  let resolver: RepoResolver;
  let cache: PullThrough;
  let fake: FakeUpstream;
  let orgUid: string;
  const made: FakeUpstream[] = [];
  const logs: Record<string, unknown>[] = [];
  const pushes: { digest: string; tag?: string | undefined; previous?: string | undefined }[] = [];
  const clock = manualClock(Date.UTC(2026, 0, 1));
  let upstream: UpstreamConfig;

  before(async () => {
    store = await db.openFresh();
    blobs = createMemoryBlobDriver();
    const events = createEventRecorder({ apiUrl: "https://api.test", registryUrl: "https://registry.test" });
    content = createRegistryContent({ store, blobs, clock, events });
    uploads = createBlobUploads({ store, blobs, clock });
    resolver = createRepoResolver({ store, clock, events });
    orgUid = newRootUid();
    await store.groups.insert({
      uid: orgUid,
      name: "acme",
      description: "",
      verified: false,
      createTime: 0,
      updateTime: 0,
    });
    upstream = {
      uid: "up-1",
      orgUid,
      orgName: "acme",
      name: "hub",
      url: "https://upstream.test",
      username: "",
      password: "",
      tagTtlMs: TTL,
      updateTime: 1,
    };
    cache = createPullThrough({
      upstreams: directory(() => upstream),
      content,
      uploads,
      resolver,
      remoteFor: () => {
        made.push(fake);
        return fake;
      },
      clock,
      logger: (line) => logs.push(line as Record<string, unknown>),
    });
  });
  after(async () => {
    await cache?.close();
    await uploads?.close();
  });
  beforeEach(() => {
    fake = createFakeUpstream();
    upstream = { ...upstream, updateTime: upstream.updateTime + 1 };
    logs.length = 0;
    pushes.length = 0;
  });

  async function pullOf(name: string): Promise<CachedPull> {
    const resolved = await resolver.resolve(name);
    const target = await cache.target(name);
    assert.ok(target, `${name} is in the upstream's namespace`);
    return {
      name,
      target,
      resolved,
      principal: undefined,
      recordPush: async (_tx, pushed, previous) => {
        pushes.push({ digest: pushed.digest, tag: pushed.tag, previous });
      },
    };
  }
  const manifestAt = async (name: string, reference: string) =>
    cache.manifest(await pullOf(name), reference.includes(":") ? { digest: reference } : { tag: reference });
  const gets = () => fake.calls.filter((c) => c.startsWith("GET"));

  it("a cold tag pull records repo, folders, manifest and tag like a push, fetching no blob", async () => {
    const digest = fake.addImage("library/alpine", "3.20", ["layer-a", "layer-b"]);
    const local = await manifestAt("acme/hub/library/alpine", "3.20");
    assert.equal(local.digest, digest);
    assert.equal(await content.tagDigest(local.repo.uid, "3.20"), digest);
    assert.ok(await content.manifest(local.repo.uid, digest));
    const hub = await store.groups.getByName(orgUid, "hub");
    assert.ok(hub, "the upstream's folder is created");
    assert.ok(await store.groups.getByName(hub.uid, "library"));
    assert.deepEqual(pushes, [{ digest, tag: "3.20", previous: undefined }]);
    assert.deepEqual(gets(), ["GET manifest library/alpine:3.20"]);
    assert.equal(await store.blobs.getLinked(local.repo.uid, fake.addBlob("layer-a").digest), undefined);
  });

  it("serves a tag checked within tagTtl without asking; after it, one HEAD, and a moved tag is fetched with its history", async () => {
    const first = fake.addImage("library/nginx", "1", ["n1"]);
    await manifestAt("acme/hub/library/nginx", "1");
    fake.calls.length = 0;
    await manifestAt("acme/hub/library/nginx", "1");
    assert.deepEqual(fake.calls, [], "within the TTL nothing is sent upstream");
    clock.advance(TTL + 1);
    await manifestAt("acme/hub/library/nginx", "1");
    assert.deepEqual(fake.calls, ["HEAD manifest library/nginx:1"], "same digest: one HEAD, no GET");
    const second = fake.addImage("library/nginx", "1", ["n2"]);
    clock.advance(TTL + 1);
    fake.calls.length = 0;
    const local = await manifestAt("acme/hub/library/nginx", "1");
    assert.equal(local.digest, second);
    assert.deepEqual(gets(), [`GET manifest library/nginx:${second}`]);
    const history = await content.tagHistory(local.repo.uid, "1", {});
    assert.deepEqual(
      history?.map((h) => h.digest),
      [first, second],
    );
    assert.deepEqual(pushes.at(-1), { digest: second, tag: "1", previous: first });
  });

  it("by digest: a stored manifest never asks the upstream; a missing one is fetched and verified by the client", async () => {
    const digest = fake.addImage("library/redis", undefined, ["r1"]);
    const local = await manifestAt("acme/hub/library/redis", digest);
    assert.equal(local.digest, digest);
    fake.failing = "unreachable";
    fake.calls.length = 0;
    clock.advance(10 * TTL);
    assert.equal((await manifestAt("acme/hub/library/redis", digest)).digest, digest);
    assert.deepEqual(fake.calls, []);
  });

  it("an index brings its child manifests (children first), and the referrers the upstream lists", async () => {
    const amd = fake.addImage("library/multi", undefined, ["amd-layer"]);
    const arm = fake.addImage("library/multi", undefined, ["arm-layer"]);
    const index = fake.addIndex("library/multi", "latest", [amd, arm]);
    const sig = fake.addImage("library/multi", undefined, ["signature"], {
      subject: { mediaType: "application/vnd.oci.image.index.v1+json", digest: index, size: 1 },
      artifactType: "application/vnd.example.sig",
    });
    fake.referrersOf.set(index, [
      { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: sig, size: 1 },
    ]);
    const local = await manifestAt("acme/hub/library/multi", "latest");
    for (const d of [amd, arm, index, sig]) assert.ok(await content.manifest(local.repo.uid, d), d);
    assert.deepEqual(
      pushes
        .map((p) => p.digest)
        .slice(0, 3)
        .sort(),
      [amd, arm, index].sort(),
    );
    assert.equal(
      pushes.findIndex((p) => p.digest === index),
      2,
      "children are recorded before their index",
    );
    const referrers = await content.referrers(local.repo.uid, index, undefined);
    assert.deepEqual(
      referrers.map((r) => r.digest),
      [sig],
    );
    assert.equal(
      gets().filter((g) => g.includes("blob")).length,
      0,
      "no blob is fetched for a manifest pull",
    );
  });

  it("an unreachable upstream serves the cached copy and logs one warning per upstream per TTL", async () => {
    const digest = fake.addImage("library/busybox", "1", ["b1"]);
    await manifestAt("acme/hub/library/busybox", "1");
    fake.failing = "unreachable";
    for (let round = 0; round < 3; round++) {
      clock.advance(TTL + 1);
      for (let i = 0; i < 5; i++)
        assert.equal((await manifestAt("acme/hub/library/busybox", "1")).digest, digest);
    }
    const warnings = logs.filter((l) => l.level === "warn");
    assert.equal(warnings.length, 3, "one per TTL, not one per request");
    assert.equal(warnings[0]?.upstream, "acme/hub");
  });

  it("with nothing cached: unreachable is 502 naming the upstream, 429 passes Retry-After, 404 is MANIFEST_UNKNOWN", async () => {
    fake.failing = "unreachable";
    const failed = toOciError(await manifestAt("acme/hub/library/none", "1").catch((e) => e));
    assert.equal(failed.status, 502);
    assert.match(failed.message, /acme\/hub/);
    fake.failing = "rate-limited";
    fake.retryAfterMs = 42_000;
    const limited = toOciError(await manifestAt("acme/hub/library/none", "1").catch((e) => e));
    assert.equal(limited.status, 429);
    assert.equal(limited.code, "TOOMANYREQUESTS");
    assert.equal(limited.headers["retry-after"], "42");
    fake.failing = undefined;
    const missing = toOciError(await manifestAt("acme/hub/library/none", "1").catch((e) => e));
    assert.equal(missing.code, "MANIFEST_UNKNOWN");
  });

  it("a rate-limited upstream with a cached copy serves the copy", async () => {
    const digest = fake.addImage("library/limited", "1", ["l1"]);
    await manifestAt("acme/hub/library/limited", "1");
    fake.failing = "rate-limited";
    clock.advance(TTL + 1);
    assert.equal((await manifestAt("acme/hub/library/limited", "1")).digest, digest);
  });

  it("20 concurrent misses of a tag make one upstream GET", async () => {
    fake.addImage("library/storm", "1", ["s1"]);
    const all = await Promise.all(
      Array.from({ length: 20 }, () => manifestAt("acme/hub/library/storm", "1")),
    );
    assert.equal(new Set(all.map((l) => l.digest)).size, 1);
    assert.equal(gets().length, 1);
  });

  it("20 concurrent blob misses make one upstream fetch; the first answer gets the bytes while they are stored", async () => {
    fake.addImage("library/blobby", "1", ["the layer's bytes"]);
    await manifestAt("acme/hub/library/blobby", "1");
    const layer = fake.addBlob("the layer's bytes");
    fake.hold = true;
    const leader = sink();
    const pull = await pullOf("acme/hub/library/blobby");
    const first = cache.blob(pull, parseDigest(layer.digest), leader.answer);
    const rest = Array.from({ length: 19 }, async () =>
      cache.blob(await pullOf("acme/hub/library/blobby"), parseDigest(layer.digest), sink().answer),
    );
    while (fake.calls.filter((c) => c.startsWith("GET blob")).length < 1)
      await new Promise((r) => setImmediate(r));
    fake.release();
    assert.deepEqual(await first, { sent: true });
    const outcomes = await Promise.all(rest);
    assert.ok(
      outcomes.every((o) => !o.sent),
      "late joiners are served locally",
    );
    assert.equal(fake.calls.filter((c) => c.startsWith("GET blob")).length, 1);
    assert.equal(leader.bytes().toString(), "the layer's bytes");
    assert.equal(leader.size(), layer.size);
    assert.ok(await leader.finished());
    const repo = (await resolver.resolve("acme/hub/library/blobby")).repo;
    assert.ok(repo && (await content.linkedBlob(repo.uid, layer.digest)));
  });

  it("a blob fetched for one repo is linked into another repo of the same upstream without a second fetch", async () => {
    const layer = fake.addBlob("shared between repos");
    fake.addImage("library/one", "1", ["shared between repos"]);
    fake.addImage("library/two", "1", ["shared between repos"]);
    // Both repos exist (their manifests pulled), so both calls reach the blob flight at once.
    await manifestAt("acme/hub/library/one", "1");
    await manifestAt("acme/hub/library/two", "1");
    fake.hold = true;
    const one = cache.blob(await pullOf("acme/hub/library/one"), parseDigest(layer.digest));
    const two = cache.blob(await pullOf("acme/hub/library/two"), parseDigest(layer.digest));
    while (fake.calls.filter((c) => c.startsWith("GET blob")).length < 1)
      await new Promise((r) => setImmediate(r));
    fake.release();
    await Promise.all([one, two]);
    assert.equal(fake.calls.filter((c) => c.startsWith("GET blob")).length, 1);
    for (const name of ["acme/hub/library/one", "acme/hub/library/two"]) {
      const repo = (await resolver.resolve(name)).repo;
      assert.ok(repo && (await content.linkedBlob(repo.uid, layer.digest)), name);
    }
  });

  it("a blob whose bytes do not match stores nothing, aborts the answer and is a 502", async () => {
    fake.addImage("library/bad", "1", ["corrupted layer"]);
    const layer = fake.addBlob("corrupted layer");
    fake.corrupt.add(layer.digest);
    const client = sink();
    const err = await cache
      .blob(await pullOf("acme/hub/library/bad"), parseDigest(layer.digest), client.answer)
      .catch((e) => e);
    assert.equal(toOciError(err).status, 502);
    assert.match(toOciError(err).message, /acme\/hub/);
    assert.equal(await client.finished(), false, "the answer was aborted, not ended");
    assert.ok(client.bytes().length < layer.size, "the last chunk was held back");
    assert.equal(await store.blobs.get(layer.digest), undefined);
    assert.equal(await blobs.stat(blobKey(parseDigest(layer.digest))), undefined);
    const leftovers = [];
    for await (const e of blobs.list("uploads/")) leftovers.push(e.key);
    assert.deepEqual(leftovers, []);
  });

  it("a client that disconnects does not stop the store write", async () => {
    fake.addImage("library/gone", "1", ["a layer the client will not wait for"]);
    const layer = fake.addBlob("a layer the client will not wait for");
    const client = sink(1);
    const out = await cache.blob(
      await pullOf("acme/hub/library/gone"),
      parseDigest(layer.digest),
      client.answer,
    );
    assert.deepEqual(out, { sent: true });
    assert.ok(await store.blobs.get(layer.digest));
    assert.ok(await blobs.stat(blobKey(parseDigest(layer.digest))));
  });

  it("a new client is made when the upstream is updated, and the old one is closed", async () => {
    const digest = fake.addImage("library/upd", "1", ["u1"]);
    await manifestAt("acme/hub/library/upd", digest);
    const before = made.length;
    const old = fake;
    await manifestAt("acme/hub/library/upd", digest);
    assert.equal(made.length, before, "same updateTime: same client");
    upstream = { ...upstream, updateTime: upstream.updateTime + 1 };
    fake = createFakeUpstream();
    fake.addImage("library/upd", "2", ["u2"]);
    await manifestAt("acme/hub/library/upd", "2");
    assert.equal(made.length, before + 1);
    assert.equal(old.closed, true);
  });

  it("fsck counts blobs a cached repo has not fetched yet as not fetched, not damage; lost fetched bytes stay damage", async () => {
    const lazy = fake.addImage("library/lazy", "1", ["never pulled layer", "pulled then lost"]);
    await manifestAt("acme/hub/library/lazy", "1");
    const lost = fake.addBlob("pulled then lost");
    await cache.blob(await pullOf("acme/hub/library/lazy"), parseDigest(lost.digest));
    await blobs.delete(blobKey(parseDigest(lost.digest)));
    const cachedRepository = async (path: string) => path.startsWith("acme/hub/");
    const report = await checkIntegrity({ store, blobs }, { deep: false, repair: false, cachedRepository });
    assert.deepEqual(
      report.damagedBlobs.map((b) => [b.digest, b.problem]),
      [[lost.digest, "missing"]],
    );
    assert.ok(report.notFetchedBlobs >= 2, `${report.notFetchedBlobs}`);
    const naive = await checkIntegrity({ store, blobs }, { deep: false, repair: false });
    assert.ok(
      naive.damagedBlobs.some((b) => b.problem === "unrecorded" && b.images.some((i) => i.includes(lazy))),
      "without the cache's rule the same blobs look unrecorded",
    );
  });
});
