import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { after, before, describe, it } from "node:test";
import { decodeProtectedHeader } from "jose";
import { createIssuer, type Issuer } from "../../src/auth/issuer.js";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import { systemClock } from "../../src/core/clock.js";
import { newRootUid } from "../../src/core/uidp.js";
import type { Store } from "../../src/storage/store.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { createTestDatabase, engineSkipReason, type TestDatabase } from "../support/databases.js";
import { type BuiltImage, buildImage, pushImage, type RegistryClient } from "../support/registry-push.js";
import { freeLoopbackPort, serveProcess, stopProcess, type WharfProcess } from "../support/wharf-process.js";

// Both replicas announce one public URL, as replicas behind a load balancer do; each request goes
// to one replica's own loopback address.
const PUBLIC_URL = "http://wharf.test";
const REGISTRY_URL = "http://registry.wharf.test";
/** The bound under test (ADR 0038): from a change's commit on one replica to the other acting on it. */
const BOUND_MS = 1000;

/** One replica: a `wharf serve` process, and fetch against its two ports. */
interface Replica extends RegistryClient {
  process: WharfProcess;
  api(path: string, init?: { method?: string; token?: string; body?: unknown }): Promise<Response>;
}

/**
 * `wharf serve` on PostgreSQL with the safety-net TTLs an hour long (`WHARF_CACHE_TTL`): whatever
 * the other replica sees within the bound, it saw through the change feed.
 */
async function startReplica(dataDir: string, databaseUrl: string): Promise<Replica> {
  const [apiPort, registryPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
  const process = await serveProcess(
    dataDir,
    {
      WHARF_DATABASE_URL: databaseUrl,
      WHARF_PUBLIC_URL: PUBLIC_URL,
      WHARF_REGISTRY_URL: REGISTRY_URL,
      WHARF_CACHE_TTL: "1h",
      WHARF_GC_INTERVAL: "0",
    },
    { apiAddr: `127.0.0.1:${apiPort}`, registryAddr: `127.0.0.1:${registryPort}` },
  );
  const headersOf = (token?: string, more: Record<string, string> = {}) =>
    token === undefined ? more : { ...more, authorization: `Bearer ${token}` };
  return {
    process,
    api: (path, init = {}) =>
      fetch(`http://127.0.0.1:${apiPort}${path}`, {
        method: init.method ?? "GET",
        headers: headersOf(init.token, init.body === undefined ? {} : { "content-type": "application/json" }),
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      }),
    registry: (path, init = {}) =>
      fetch(`http://127.0.0.1:${registryPort}${path}`, {
        method: init.method ?? "GET",
        headers: headersOf(init.token, init.headers),
        redirect: "manual",
        ...(init.body === undefined ? {} : { body: init.body, duplex: "half" }),
      } as RequestInit),
  };
}

/**
 * Polls `acts` back to back (no pause: the time to the first true answer is what is measured)
 * and returns the milliseconds from the call until it answered true. Fails after 10 s.
 */
async function untilActs(what: string, acts: () => Promise<boolean>): Promise<number> {
  const start = performance.now();
  while (!(await acts())) {
    if (performance.now() - start > 10_000) assert.fail(`not within 10 s: ${what}`);
  }
  return performance.now() - start;
}

/** The `p`th percentile (0–100) of `values`, nearest rank. */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

const skip = engineSkipReason("postgres");

describe("two replicas on one PostgreSQL database agree within 1 s (TTLs an hour long)", { skip }, () => {
  let db: TestDatabase;
  let databaseUrl: string;
  let dataDir: string;
  let store: Store;
  let issuer: Issuer;
  let a: Replica;
  let b: Replica;
  let admin: string;
  /** The administrator's registry-audience token. */
  let pusher: string;
  let org: string;
  let images: BuiltImage[];

  const mint = (subject: string, audience = PUBLIC_URL) =>
    issuer.mint({ subject, audience, ttlSeconds: 3600 });
  const wharf = async (...args: string[]) => {
    const r = await runCliInProcess([...args, "--database-url", databaseUrl], process.env);
    assert.equal(r.code, 0, `wharf ${args.join(" ")}: ${r.stderr}`);
    return r.stdout.trim();
  };
  /** A new root identity (as a first login makes one) and an API token of theirs. */
  const person = async (name: string) => {
    const uid = newRootUid();
    const now = Date.now();
    await store.identities.insert({
      ...{ uid, name, description: "", email: `${name}@example.com` },
      claimMatch: { issuer: "https://idp.example.com", subject: name },
      ...{ createTime: now, updateTime: now },
    });
    return { uid, token: await mint(uid) };
  };
  const digestOf = async (replica: Replica, reference: string, token = pusher) => {
    const res = await replica.registry(`/v2/acme/app/manifests/${reference}`, { method: "HEAD", token });
    return res.status === 200 ? res.headers.get("docker-content-digest") : res.status;
  };

  before(async () => {
    db = createTestDatabase("postgres");
    const options = await db.freshOptions();
    databaseUrl = options.databaseUrl ?? "";
    dataDir = await mkdtemp(join(tmpdir(), "wharf-replicas-"));
    a = await startReplica(dataDir, databaseUrl);
    b = await startReplica(dataDir, databaseUrl);
    store = await db.open(options);
    issuer = createIssuer({ store, issuerUrl: PUBLIC_URL, clock: systemClock });
    admin = await mint(ADMIN_IDENTITY_UID);
    pusher = await mint(ADMIN_IDENTITY_UID, REGISTRY_URL);
    const created = await a.api("/iam/v2/groups", { method: "POST", token: admin, body: { name: "acme" } });
    assert.equal(created.status, 200, await created.clone().text());
    org = ((await created.json()) as { uid: string }).uid;
    images = [buildImage("one"), buildImage("two")];
    await pushImage(a, "acme/app", "one", pusher, images[0] as BuiltImage);
    await pushImage(a, "acme/app", "two", pusher, images[1] as BuiltImage);
    await pushImage(a, "acme/app", "moving", pusher, images[0] as BuiltImage);
  });
  after(async () => {
    await Promise.all([a, b].filter((r) => r !== undefined).map((r) => stopProcess(r.process)));
    await db?.dispose();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("200+ changes on A (role bindings created and deleted, a tag moved): B acts within 1 s p99", async () => {
    const reader = await person("reader");
    const readerPull = await mint(reader.uid, REGISTRY_URL);
    const pullsOnB = async () => (await digestOf(b, "one", readerPull)) === images[0]?.digest;
    assert.equal(await pullsOnB(), false, "no binding yet: B refuses (and caches the empty grants)");
    const delays: Record<"bindingCreated" | "bindingDeleted" | "tagMoved", number[]> = {
      bindingCreated: [],
      bindingDeleted: [],
      tagMoved: [],
    };
    for (let round = 0; round < 70; round++) {
      const bound = await a.api(`/iam/v2/roleBindings/${org}`, {
        method: "POST",
        token: admin,
        body: { identityUid: reader.uid, roleUid: builtInRoleUid("registry.pull") },
      });
      assert.equal(bound.status, 200, await bound.clone().text());
      delays.bindingCreated.push(await untilActs("B grants the new binding", pullsOnB));
      const binding = ((await bound.json()) as { uid: string }).uid;

      const deleted = await a.api(`/iam/v2/roleBindings/${binding}`, { method: "DELETE", token: admin });
      assert.equal(deleted.status, 200, await deleted.clone().text());
      delays.bindingDeleted.push(await untilActs("B stops granting", async () => !(await pullsOnB())));

      const image = images[(round + 1) % 2] as BuiltImage;
      const moved = await a.registry("/v2/acme/app/manifests/moving", {
        method: "PUT",
        token: pusher,
        headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" },
        body: image.manifest,
      });
      assert.equal(moved.status, 201, await moved.clone().text());
      delays.tagMoved.push(
        await untilActs(
          "B answers the moved tag",
          async () => (await digestOf(b, "moving")) === image.digest,
        ),
      );
    }
    const all = Object.values(delays).flat();
    assert.ok(all.length >= 200, `${all.length} changes measured`);
    const figures = (values: number[]) =>
      `n=${values.length} p50=${percentile(values, 50).toFixed(1)} ms p99=${percentile(values, 99).toFixed(1)} ms max=${Math.max(...values).toFixed(1)} ms`;
    for (const [kind, values] of Object.entries(delays))
      console.log(`replica agreement ${kind}: ${figures(values)}`);
    console.log(`replica agreement (all): ${figures(all)}`);
    assert.ok(percentile(all, 99) <= BOUND_MS, `p99 ${percentile(all, 99)} ms > ${BOUND_MS} ms`);
    // A denied pull answers 401 or 403 (with or without a token): nothing leaks after the delete.
    assert.notEqual(await digestOf(b, "one", readerPull), 200);
  });

  it("a revoked token is refused by B within 1 s (the revocation poll is an hour)", async () => {
    const revokee = await person("revokee");
    const statusOn = async (replica: Replica) =>
      (await replica.api("/iam/v2/groups", { token: revokee.token })).status;
    assert.deepEqual([await statusOn(a), await statusOn(b)], [200, 200], "accepted (and cached) by both");
    await wharf("admin", "tokens", "revoke", "--subject", revokee.uid);
    const delay = await untilActs("B refuses the revoked token", async () => (await statusOn(b)) === 401);
    console.log(`replica agreement revocation: ${delay.toFixed(1)} ms`);
    assert.ok(delay <= BOUND_MS, `${delay} ms`);
    assert.equal(await statusOn(a), 401);
  });

  it("a rotated key signs on B within 1 s, and tokens it signs on A verify on B", async () => {
    const reissuedKid = async (replica: Replica) => {
      const res = await replica.api("/sts/exchange", { token: admin });
      assert.equal(res.status, 200, await res.clone().text());
      const { token } = (await res.json()) as { token: string };
      return { kid: decodeProtectedHeader(token).kid, token };
    };
    const oldKid = (await reissuedKid(b)).kid;
    const newKid = await wharf("admin", "keys", "rotate");
    assert.notEqual(newKid, oldKid);
    const delay = await untilActs(
      "B signs with the new key",
      async () => (await reissuedKid(b)).kid === newKid,
    );
    console.log(`replica agreement key rotation: ${delay.toFixed(1)} ms`);
    assert.ok(delay <= BOUND_MS, `${delay} ms`);
    const fromA = await reissuedKid(a);
    assert.equal(fromA.kid, newKid);
    assert.equal(
      (await b.api("/iam/v2/groups", { token: fromA.token })).status,
      200,
      "A's new token verifies on B",
    );
  });

  it("a tag deleted on A answers 404 on B within 1 s", async () => {
    await pushImage(a, "acme/app", "doomed", pusher, images[1] as BuiltImage);
    assert.equal(await digestOf(b, "doomed"), images[1]?.digest);
    const deleted = await a.registry("/v2/acme/app/manifests/doomed", { method: "DELETE", token: pusher });
    assert.equal(deleted.status, 202, await deleted.clone().text());
    const delay = await untilActs("B answers 404", async () => (await digestOf(b, "doomed")) === 404);
    assert.ok(delay <= BOUND_MS, `${delay} ms`);
  });

  it("a repo deleted on A is gone on B within 1 s (B had resolved its name)", async () => {
    await pushImage(a, "acme/gone", "v1", pusher, images[0] as BuiltImage);
    const tagsOn = async (replica: Replica) =>
      (await replica.registry("/v2/acme/gone/tags/list", { token: pusher })).status;
    assert.equal(await tagsOn(b), 200, "B resolves (and caches) the name");
    const repo = await store.repos.getByName(org, "gone");
    assert.ok(repo);
    const deleted = await a.api(`/registry/v2/repos/${repo.uid}`, { method: "DELETE", token: admin });
    assert.equal(deleted.status, 200, await deleted.clone().text());
    const delay = await untilActs("B answers 404 for the repo", async () => (await tagsOn(b)) === 404);
    console.log(`replica agreement repo delete: ${delay.toFixed(1)} ms`);
    assert.ok(delay <= BOUND_MS, `${delay} ms`);
    const pulled = await b.registry(`/v2/acme/gone/manifests/${images[0]?.digest}`, { token: pusher });
    assert.equal(pulled.status, 404);
  });

  /**
   * A chunked upload whose POST, PATCHes and PUT go round-robin to A and B; resolves to the PUT's
   * response. `digest` is what the PUT claims (default: the bytes' own).
   */
  async function roundRobinUpload(repo: string, bytes: Buffer, chunkSize: number, digest?: string) {
    const replicas = [a, b];
    let turn = 0;
    const next = () => replicas[turn++ % 2] as Replica;
    const started = await next().registry(`/v2/${repo}/blobs/uploads/`, { method: "POST", token: pusher });
    assert.equal(started.status, 202, await started.clone().text());
    let location = new URL(started.headers.get("location") ?? "", "http://x").pathname;
    for (let offset = 0; offset < bytes.length; offset += chunkSize) {
      const chunk = bytes.subarray(offset, offset + chunkSize);
      const patched = await next().registry(location, {
        method: "PATCH",
        token: pusher,
        headers: {
          "content-type": "application/octet-stream",
          "content-range": `${offset}-${offset + chunk.length - 1}`,
        },
        body: chunk,
      });
      assert.equal(patched.status, 202, await patched.clone().text());
      assert.equal(patched.headers.get("range"), `0-${offset + chunk.length - 1}`);
      location = new URL(patched.headers.get("location") ?? "", "http://x").pathname;
    }
    const claimed = digest ?? `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
    return next().registry(`${location}?digest=${claimed}`, { method: "PUT", token: pusher });
  }
  const blobStatus = async (replica: Replica, repo: string, digest: string) =>
    (await replica.registry(`/v2/${repo}/blobs/${digest}`, { method: "HEAD", token: pusher })).status;

  it("chunked uploads alternate between A and B (POST, PATCHes, PUT) and complete with the right digest", async () => {
    for (const [size, chunkSize] of [
      [3, 1],
      [12 * 1024 * 1024 + 5, 1024 * 1024],
    ] as const) {
      const bytes = randomBytes(size);
      const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
      const put = await roundRobinUpload("acme/up", bytes, chunkSize);
      assert.equal(put.status, 201, await put.clone().text());
      assert.equal(put.headers.get("docker-content-digest"), digest);
      for (const replica of [a, b]) {
        const got = await replica.registry(`/v2/acme/up/blobs/${digest}`, { token: pusher });
        assert.equal(got.status, 200);
        const body = Buffer.from(await got.arrayBuffer());
        assert.equal(body.length, size);
        assert.ok(body.equals(bytes), `the bytes served by a replica are the bytes uploaded (${size} B)`);
      }
    }
  });

  it("a round-robin upload finished with a wrong digest is refused and stores nothing", async () => {
    const bytes = randomBytes(3 * 1024 * 1024);
    const real = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
    const claimed = `sha256:${createHash("sha256").update("something else").digest("hex")}`;
    const put = await roundRobinUpload("acme/up", bytes, 1024 * 1024, claimed);
    assert.equal(put.status, 400, await put.clone().text());
    assert.equal(((await put.json()) as { errors: { code: string }[] }).errors[0]?.code, "DIGEST_INVALID");
    for (const replica of [a, b]) {
      assert.equal(await blobStatus(replica, "acme/up", claimed), 404);
      assert.equal(await blobStatus(replica, "acme/up", real), 404);
    }
  });
});
