import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createTestDatabase, engineSkipReason, type TestDatabase } from "../support/databases.js";
import {
  type BuiltImage,
  buildImage,
  fetchRegistryClient,
  ociErrorOf,
  pushBlob,
  putManifest,
  sha256,
} from "../support/registry-push.js";
import {
  adminTokenOf,
  runWharf,
  serveProcess,
  stopProcess,
  type WharfProcess,
} from "../support/wharf-process.js";

// Garbage collection on one replica while another takes pushes loses nothing (issue 33): two
// `wharf serve` processes on one PostgreSQL database and one blob directory; `wharf gc --grace 1s`
// runs again and again next to them (every blob unreferenced for a second is fair game, so it races
// every push's window between its blob uploads and its manifest) while pushes go through the
// other replica, each leaving an unreferenced blob behind, and every third one holding its manifest
// back past the grace after its blobs (so a run may take them in between: the registry then
// refuses the manifest with MANIFEST_BLOB_UNKNOWN and the client uploads them again). Every
// acknowledged push must pull, from both replicas, with its exact bytes; all the garbage must be
// gone, so the collector did delete while the pushes ran.

const IMAGES = 48;
const CONCURRENT_PUSHES = 4;
const SEEDED_GARBAGE = 30;
const ORG = "gcx";

/** How long every third push waits between its blobs and its manifest: past the 1 s grace. */
const HOLD_MANIFEST_MS = 1_200;

interface GcRun {
  startedAt: number;
  endedAt: number;
  report: { manifests: number; links: number; blobs: number; uploads: number; strayObjects: number };
}

describe("garbage collection next to pushes on another replica [postgres]", {
  skip: engineSkipReason("postgres"),
}, () => {
  let db: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;
  const servers: WharfProcess[] = [];

  before(async () => {
    db = createTestDatabase("postgres");
    dataDir = await mkdtemp(join(tmpdir(), "wharf-gc-replicas-"));
    // One database and one blob directory (the data directory's filesystem blob store) for all.
    env = { WHARF_DATABASE_URL: (await db.options()).databaseUrl as string };
    servers.push(await serveProcess(dataDir, env), await serveProcess(dataDir, env));
  });
  after(async () => {
    for (const server of servers) await stopProcess(server, "SIGKILL");
    await db.dispose();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("every acknowledged push pulls with its bytes from both replicas; all the garbage is gone", async (t) => {
    const [gcSide, pushSide] = servers as [WharfProcess, WharfProcess];
    const tokenFor = async (server: WharfProcess) =>
      adminTokenOf(dataDir, server.apiUrl, { audience: server.registryUrl, env });
    const apiToken = await adminTokenOf(dataDir, gcSide.apiUrl, { env });
    const res = await fetch(`${gcSide.apiUrl}/iam/v2/groups`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiToken}` },
      body: JSON.stringify({ name: ORG }),
    });
    assert.equal(res.status, 200, await res.text());
    const onGcSide = fetchRegistryClient(gcSide.registryUrl, { token: await tokenFor(gcSide) });
    const onPushSide = fetchRegistryClient(pushSide.registryUrl, { token: await tokenFor(pushSide) });

    // Garbage: blobs no manifest references.
    const junk: string[] = [];
    for (let i = 0; i < SEEDED_GARBAGE; i++) {
      junk.push(await pushBlob(onGcSide, `${ORG}/junk`, `unreferenced blob ${i} ${"x".repeat(i * 37)}`));
    }

    let pushing = true;
    const gcRuns: GcRun[] = [];
    const gcEnv = { ...process.env, ...env, WHARF_DATA_DIR: dataDir };
    const collectOnce = async () => {
      const startedAt = performance.now();
      const run = await runWharf(["gc", "--grace", "1s"], gcEnv);
      assert.equal(run.code, 0, `wharf gc failed: ${run.stderr}`);
      gcRuns.push({ startedAt, endedAt: performance.now(), report: JSON.parse(run.stdout) });
    };
    const collecting = (async () => {
      while (pushing || gcRuns.length < 2) await collectOnce();
    })();
    // Awaited after the pushes; a failure meanwhile is not unhandled.
    collecting.catch(() => {});

    const pushed: { repo: string; tag: string; image: BuiltImage; acknowledgedAt: number }[] = [];
    let firstPushAt = Number.POSITIVE_INFINITY;
    let retries = 0;
    /** Pushes an image; a manifest refused because the collector took a blob first is pushed again. */
    const pushOne = async (i: number) => {
      const repo = `${ORG}/app${i % 6}`;
      const tag = `v${i}`;
      const image = buildImage(`image ${i}`, [`layer ${i} a ${"a".repeat(i * 13)}`, `layer ${i} b`]);
      firstPushAt = Math.min(firstPushAt, performance.now());
      junk.push(await pushBlob(onPushSide, `${ORG}/junk`, `left behind by push ${i}`));
      for (let attempt = 0; ; attempt++) {
        for (const bytes of image.blobs.values()) await pushBlob(onPushSide, repo, bytes);
        if (i % 3 === 0) await new Promise((r) => setTimeout(r, HOLD_MANIFEST_MS));
        const put = await putManifest(onPushSide, repo, tag, image.manifest);
        if (put.status === 201) {
          assert.equal(put.headers.get("docker-content-digest"), image.digest);
          pushed.push({ repo, tag, image, acknowledgedAt: performance.now() });
          return;
        }
        const { code, message } = await ociErrorOf(put);
        assert.equal(code, "MANIFEST_BLOB_UNKNOWN", `manifest PUT ${repo}:${tag}: ${put.status} ${message}`);
        assert.ok(attempt < 20, "a push keeps losing its blobs to the collector");
        retries++;
      }
    };
    let next = 0;
    try {
      await Promise.all(
        Array.from({ length: CONCURRENT_PUSHES }, async () => {
          while (next < IMAGES) await pushOne(next++);
        }),
      );
    } finally {
      pushing = false;
      await collecting;
    }
    // One more run after the last push: nothing acknowledged may be collected later either.
    await collectOnce();

    const lastAck = Math.max(...pushed.map((p) => p.acknowledgedAt));
    const overlapping = gcRuns.filter((r) => r.startedAt < lastAck && r.endedAt > firstPushAt);
    const removed = gcRuns.reduce((n, r) => n + r.report.blobs, 0);
    const removedDuring = overlapping.reduce((n, r) => n + r.report.blobs, 0);
    t.diagnostic(
      `gc runs=${gcRuns.length} (during pushes ${overlapping.length}) blobs removed=${removed} (by runs during pushes ${removedDuring}) links removed=${gcRuns.reduce((n, r) => n + r.report.links, 0)} pushes=${pushed.length} re-pushed after MANIFEST_BLOB_UNKNOWN=${retries}`,
    );
    assert.equal(pushed.length, IMAGES, "every push was acknowledged");
    assert.ok(overlapping.length >= 1, "garbage collection ran while pushes went on");
    assert.ok(removed >= SEEDED_GARBAGE + IMAGES, `the collector deleted all the garbage (${removed} blobs)`);
    for (const digest of junk) {
      const head = await onPushSide.registry(`/v2/${ORG}/junk/blobs/${digest}`, { method: "HEAD" });
      assert.equal(head.status, 404, `seeded garbage ${digest} is gone`);
    }

    for (const { repo, tag, image } of pushed) {
      for (const [side, client] of [
        ["push side", onPushSide],
        ["gc side", onGcSide],
      ] as const) {
        const manifest = await client.registry(`/v2/${repo}/manifests/${tag}`, {
          headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
        });
        assert.equal(manifest.status, 200, `${repo}:${tag} from the ${side}`);
        assert.equal(
          sha256(Buffer.from(await manifest.arrayBuffer())),
          image.digest,
          `${repo}:${tag} manifest bytes`,
        );
        for (const digest of image.blobs.keys()) {
          const blob = await client.registry(`/v2/${repo}/blobs/${digest}`);
          assert.ok(
            blob.status === 200 || blob.status === 307,
            `${repo}@${digest} from the ${side}: ${blob.status}`,
          );
          assert.equal(blob.status, 200, "the filesystem blob store serves bytes itself");
          assert.equal(sha256(Buffer.from(await blob.arrayBuffer())), digest, `${repo}@${digest} bytes`);
        }
      }
    }
  });
});
