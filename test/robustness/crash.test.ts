import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createTestDatabase, ENGINES, engineSkipReason, type TestDatabase } from "../support/databases.js";
import { type PlainResponse, plainRequest } from "../support/plain-http.js";
import { OCI_MANIFEST, sha256 } from "../support/registry-push.js";
import { type SeededRandom, seededRandom } from "../support/seeded-random.js";
import {
  adminTokenOf,
  freeLoopbackPort,
  serveProcess,
  stopProcess,
  type WharfProcess,
} from "../support/wharf-process.js";

// Crash safety of the registry write path: a `wharf serve` process is killed (SIGKILL) while
// dozens of pushes are in flight, then restarted on the same data. Whatever the registry
// acknowledged (the manifest PUT answered 201) must be there after the restart, byte for byte,
// with its tag and tag history; nothing half-written may ever be served; interrupted uploads can
// be resumed or cleanly refused, and started again.

const CYCLES = 3;
const PUSHES_PER_CYCLE = 56;
const REPOS = 4;
const CHUNK = 64 * 1024;
const ORG = "crash";
/** Fixed so that a run replays the same contents, modes and kill moments. */
const SEED = 0x5eed_c4a5;

type UploadMode = "monolithic" | "chunked" | "single-post";

/** sha256 of a blob the test made, computed once: a push's blobs are named by digest many times. */
const digests = new WeakMap<Buffer, string>();
function digestOf(blob: Buffer): string {
  let digest = digests.get(blob);
  if (digest === undefined) {
    digest = sha256(blob);
    digests.set(blob, digest);
  }
  return digest;
}

/** One push: its blobs and manifest are fixed by (cycle, index); what happened to it is recorded. */
interface Push {
  cycle: number;
  index: number;
  repo: string;
  tag: string;
  mode: UploadMode;
  blobs: Buffer[];
  manifest: Buffer;
  digest: string;
  /** The manifest PUT answered 201 before the kill. */
  acknowledged: boolean;
  /** The upload session that was open when the push broke off, with the blob it was for. */
  interrupted?: { location: string; blob: Buffer };
}

/** A push's image: a small config naming it, and one or two layers of seeded random bytes. */
function buildPush(cycle: number, index: number): Push {
  const rng = seededRandom(SEED ^ (cycle * 7919 + index * 104_729));
  const config = Buffer.from(
    JSON.stringify({ architecture: "amd64", os: "linux", push: `${cycle}/${index}` }),
  );
  const layers = [rng.bytes(rng.int(1, 5 * CHUNK))];
  if (rng.next() < 0.5) layers.push(rng.bytes(rng.int(CHUNK, 9 * CHUNK + 17)));
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: {
        mediaType: "application/vnd.oci.image.config.v1+json",
        digest: digestOf(config),
        size: config.length,
      },
      layers: layers.map((l) => ({
        mediaType: "application/vnd.oci.image.layer.v1.tar",
        digest: digestOf(l),
        size: l.length,
      })),
    }),
  );
  const modes: UploadMode[] = ["monolithic", "chunked", "single-post"];
  return {
    cycle,
    index,
    repo: `${ORG}/r${index % REPOS}`,
    tag: `p${index}`,
    mode: modes[(index + cycle) % modes.length] as UploadMode,
    blobs: [config, ...layers],
    manifest,
    digest: sha256(manifest),
    acknowledged: false,
  };
}

/** The registry as one push sees it: plain requests with the admin's registry token. */
interface RegistryClient {
  url: string;
  token: string;
}

function call(
  registry: RegistryClient,
  method: string,
  path: string,
  body?: Uint8Array,
  headers: Record<string, string> = {},
): Promise<PlainResponse> {
  return plainRequest(`${registry.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${registry.token}`, ...headers },
    ...(body === undefined ? {} : { body }),
  });
}

/** Throws (with the answer) unless `res` has `status`. */
function expectStatus(res: PlainResponse, status: number, what: string): PlainResponse {
  if (res.status !== status) {
    throw new UnexpectedAnswer(`${what} answered ${res.status}: ${res.body.toString().slice(0, 300)}`);
  }
  return res;
}

/** A wrong answer from a live server (as opposed to a connection the kill broke). */
class UnexpectedAnswer extends Error {}

function withDigest(location: string, digest: string): string {
  return `${location}${location.includes("?") ? "&" : "?"}digest=${digest}`;
}

/** Uploads one blob the push's way; `push.interrupted` names the open session meanwhile. */
async function uploadBlob(registry: RegistryClient, push: Push, blob: Buffer): Promise<void> {
  const digest = digestOf(blob);
  const uploads = `/v2/${push.repo}/blobs/uploads/`;
  if (push.mode === "single-post") {
    expectStatus(await call(registry, "POST", `${uploads}?digest=${digest}`, blob), 201, "POST ?digest=");
    return;
  }
  const started = expectStatus(await call(registry, "POST", uploads), 202, "POST upload");
  const location = String(started.headers.location);
  push.interrupted = { location, blob };
  if (push.mode === "monolithic") {
    expectStatus(await call(registry, "PUT", withDigest(location, digest), blob), 201, "PUT upload");
  } else {
    // The last chunk goes with the PUT for odd pushes, and in a PATCH of its own for even ones.
    const lastInPut = push.index % 2 === 1;
    let offset = 0;
    while (blob.length - offset > (lastInPut ? CHUNK : 0)) {
      const chunk = blob.subarray(offset, offset + CHUNK);
      const range = `${offset}-${offset + chunk.length - 1}`;
      expectStatus(
        await call(registry, "PATCH", location, chunk, { "content-range": range }),
        202,
        `PATCH ${range}`,
      );
      offset += chunk.length;
    }
    const rest = blob.subarray(offset);
    expectStatus(
      await call(registry, "PUT", withDigest(location, digest), rest.length > 0 ? rest : undefined),
      201,
      "PUT upload",
    );
  }
  push.interrupted = undefined;
}

/** Pushes every blob, then the manifest under the tag; marks the push acknowledged on its 201. */
async function runPush(registry: RegistryClient, push: Push): Promise<void> {
  for (const blob of push.blobs) await uploadBlob(registry, push, blob);
  const res = expectStatus(
    await call(registry, "PUT", `/v2/${push.repo}/manifests/${push.tag}`, push.manifest, {
      "content-type": OCI_MANIFEST,
    }),
    201,
    "manifest PUT",
  );
  assert.equal(res.headers["docker-content-digest"], push.digest);
  push.acknowledged = true;
}

/** Asserts that a 200 answer carries exactly the bytes of `digest` (never a partial blob). */
function assertWhole(res: PlainResponse, digest: string, what: string): void {
  assert.equal(sha256(res.body), digest, `${what}: a 200 answer must hash to its digest`);
}

/** Every digest a tag has had, oldest first, repeated records of one digest collapsed. */
async function historyOf(registry: RegistryClient, repo: string, tag: string): Promise<string[]> {
  const res = expectStatus(
    await call(registry, "GET", `/v2/${repo}/_service/history/${tag}`),
    200,
    `history of ${repo}:${tag}`,
  );
  const records = (JSON.parse(res.body.toString()) as { history: { digest: string }[] }).history;
  return records.map((r) => r.digest).filter((d, i, all) => i === 0 || all[i - 1] !== d);
}

/** Runs `check` over `items`, at most 8 at a time (the checks after a restart are many small requests). */
async function forEachLimited<T>(items: readonly T[], check: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await check(items[next++] as T);
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

/** Tallies reported at the end of each engine's run. */
interface Tally {
  cycles: number;
  pushes: number;
  acknowledged: number;
  /** Checks of acknowledged pushes after a restart (each push is checked after every later restart). */
  verifications: number;
  lost: number;
  unacknowledgedButStored: number;
  sessionsResumed: number;
  sessionsUnknown: number;
  sessionsRefused: number;
  repushed: number;
}

for (const engine of ENGINES) {
  const skip = engineSkipReason(engine);
  describe(`registry crash safety under concurrent pushes [${engine}]`, { skip }, () => {
    let dataDir: string;
    let db: TestDatabase | undefined;
    let env: Record<string, string>;
    let addrs: { apiAddr: string; registryAddr: string };
    let server: WharfProcess | undefined;

    const start = async () => {
      server = await serveProcess(dataDir, env, addrs);
      return server;
    };
    // Minted once: the addresses stay, so the issuer and the registry audience do too.
    let registry: RegistryClient;

    before(async () => {
      dataDir = await mkdtemp(join(tmpdir(), `wharf-crash-${engine}-`));
      env = {};
      if (engine === "postgres") {
        db = createTestDatabase("postgres");
        env.WHARF_DATABASE_URL = (await db.options()).databaseUrl as string;
      }
      addrs = {
        apiAddr: `127.0.0.1:${await freeLoopbackPort()}`,
        registryAddr: `127.0.0.1:${await freeLoopbackPort()}`,
      };
      const running = await start();
      const [registryToken, apiToken] = await Promise.all([
        adminTokenOf(dataDir, running.apiUrl, { audience: running.registryUrl, env }),
        adminTokenOf(dataDir, running.apiUrl, { env }),
      ]);
      registry = { url: running.registryUrl, token: registryToken };
      const res = await fetch(`${running.apiUrl}/iam/v2/groups`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiToken}` },
        body: JSON.stringify({ name: ORG }),
      });
      assert.equal(res.status, 200, await res.text());
    });
    after(async () => {
      if (server) await stopProcess(server, "SIGKILL");
      await db?.dispose();
      await rm(dataDir, { recursive: true, force: true });
    });

    it(`keeps every acknowledged push through ${CYCLES} kill -9 cycles and serves no partial blob`, async (t) => {
      const rng: SeededRandom = seededRandom(SEED + (engine === "postgres" ? 1 : 0));
      const tally: Tally = {
        cycles: 0,
        pushes: 0,
        acknowledged: 0,
        verifications: 0,
        lost: 0,
        unacknowledgedButStored: 0,
        sessionsResumed: 0,
        sessionsUnknown: 0,
        sessionsRefused: 0,
        repushed: 0,
      };
      /** Every push that ended acknowledged (before a kill, or re-pushed after the restart). */
      const stored: Push[] = [];
      /** Per `<repo>:<tag>`, the digests it was pushed with, cycle by cycle. */
      const tagDigests = new Map<string, string[]>();

      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const pushes = Array.from({ length: PUSHES_PER_CYCLE }, (_, i) => buildPush(cycle, i));
        // Kill once this many pushes are acknowledged (a seeded moment while the rest are in flight).
        const killAfter = rng.int(4, Math.floor(PUSHES_PER_CYCLE * 0.7));
        const extraDelayMs = rng.int(0, 25);
        let acknowledged = 0;
        let killing: Promise<void> | undefined;
        const running = server as WharfProcess;
        const kill = () => {
          killing ??= (async () => {
            await new Promise((r) => setTimeout(r, extraDelayMs));
            await stopProcess(running, "SIGKILL");
          })();
          return killing;
        };
        const unexpected: string[] = [];
        const outcomes = pushes.map(async (push) => {
          try {
            await runPush(registry, push);
            if (++acknowledged === killAfter) void kill();
          } catch (err) {
            // Before the kill every answer must be right; after it, broken connections are expected.
            if (err instanceof UnexpectedAnswer || killing === undefined) {
              unexpected.push(`${push.repo}:${push.tag}: ${(err as Error).message}`);
            }
          }
        });
        await Promise.all(outcomes);
        await kill();
        assert.deepEqual(unexpected, [], "no wrong answer while the server was alive");
        const inFlight = pushes.filter((p) => !p.acknowledged).length;
        assert.ok(inFlight > 0, "the kill came while pushes were in flight");
        tally.cycles++;
        tally.pushes += pushes.length;
        tally.acknowledged += pushes.filter((p) => p.acknowledged).length;
        for (const push of pushes) {
          const key = `${push.repo}:${push.tag}`;
          tagDigests.set(key, [...(tagDigests.get(key) ?? []), push.digest]);
          if (push.acknowledged) stored.push(push);
        }

        await start();

        // 1. Every acknowledged push (of every cycle so far) is whole: manifest and blobs by digest.
        await forEachLimited(stored, async (push) => {
          const manifest = await call(
            registry,
            "GET",
            `/v2/${push.repo}/manifests/${push.digest}`,
            undefined,
            {
              accept: OCI_MANIFEST,
            },
          );
          const blobs = await Promise.all(
            push.blobs.map((b) => call(registry, "GET", `/v2/${push.repo}/blobs/${digestOf(b)}`)),
          );
          const whole =
            manifest.status === 200 &&
            sha256(manifest.body) === push.digest &&
            blobs.every((b, i) => b.status === 200 && sha256(b.body) === digestOf(push.blobs[i] as Buffer));
          if (whole) tally.verifications++;
          else tally.lost++;
          assert.ok(whole, `acknowledged push ${push.repo}@${push.digest} (cycle ${push.cycle}) is intact`);
        });

        // 2. What was not acknowledged is absent or whole, never partial.
        await forEachLimited(
          pushes.filter((p) => !p.acknowledged),
          async (push) => {
            const manifest = await call(
              registry,
              "GET",
              `/v2/${push.repo}/manifests/${push.digest}`,
              undefined,
              {
                accept: OCI_MANIFEST,
              },
            );
            assert.ok([200, 404].includes(manifest.status), `manifest answered ${manifest.status}`);
            if (manifest.status === 200) {
              assertWhole(manifest, push.digest, "unacknowledged manifest");
              tally.unacknowledgedButStored++;
            }
            for (const blob of push.blobs) {
              const res = await call(registry, "GET", `/v2/${push.repo}/blobs/${digestOf(blob)}`);
              assert.ok([200, 404].includes(res.status), `blob answered ${res.status}`);
              if (res.status === 200) assertWhole(res, digestOf(blob), "unacknowledged blob");
            }
          },
        );

        // 3. An interrupted session resumes where it stands, or is cleanly unknown or refused.
        await forEachLimited(
          pushes.filter((p) => p.interrupted !== undefined),
          async (push) => {
            const { location, blob } = push.interrupted as { location: string; blob: Buffer };
            const status = await call(registry, "GET", location);
            if (status.status === 404) {
              assert.match(status.body.toString(), /BLOB_UPLOAD_UNKNOWN/);
              tally.sessionsUnknown++;
              return;
            }
            expectStatus(status, 204, "upload status");
            const end = Number(/^0-(\d+)$/.exec(String(status.headers.range))?.[1]);
            // Chunks are whole multiples of CHUNK bytes, so "0-0" can only mean an empty session.
            const offset = end === 0 ? 0 : end + 1;
            assert.ok(offset <= blob.length, `the session holds ${offset} of ${blob.length} bytes`);
            const rest = blob.subarray(offset);
            const patched =
              rest.length === 0
                ? undefined
                : await call(registry, "PATCH", location, rest, {
                    "content-range": `${offset}-${blob.length - 1}`,
                  });
            const finished =
              patched === undefined || patched.status === 202
                ? await call(registry, "PUT", withDigest(location, digestOf(blob)))
                : patched;
            if (finished.status !== 201) {
              // Refused: bytes past the recorded size (a chunk cut off), or bytes already moved away
              // by a finish the kill cut off. Either way the session is over.
              const refusal = `${finished.status} ${finished.body.toString()}`;
              assert.match(refusal, /^(400 .*BLOB_UPLOAD_INVALID|404 .*BLOB_UPLOAD_UNKNOWN)/);
              tally.sessionsRefused++;
              expectStatus(await call(registry, "GET", location), 404, "a refused session");
              return;
            }
            const got = expectStatus(
              await call(registry, "GET", `/v2/${push.repo}/blobs/${digestOf(blob)}`),
              200,
              "resumed blob",
            );
            assertWhole(got, digestOf(blob), "resumed blob");
            tally.sessionsResumed++;
          },
        );

        // 4. Every push that was cut off can be started again from scratch, and then counts as stored.
        const repush = pushes.filter((p) => !p.acknowledged);
        for (const push of repush) push.interrupted = undefined;
        await Promise.all(repush.map((p) => runPush(registry, p)));
        tally.repushed += repush.length;
        stored.push(...repush);

        // 5. Tags and their history: each tag names this cycle's push, its history every cycle's.
        await forEachLimited(pushes, async (push) => {
          const byTag = expectStatus(
            await call(registry, "HEAD", `/v2/${push.repo}/manifests/${push.tag}`, undefined, {
              accept: OCI_MANIFEST,
            }),
            200,
            `tag ${push.repo}:${push.tag}`,
          );
          assert.equal(byTag.headers["docker-content-digest"], push.digest);
          assert.deepEqual(
            await historyOf(registry, push.repo, push.tag),
            tagDigests.get(`${push.repo}:${push.tag}`),
            `history of ${push.repo}:${push.tag}`,
          );
        });
      }

      assert.equal(tally.lost, 0);
      assert.ok(tally.acknowledged > 0);
      t.diagnostic(`crash tally [${engine}]: ${JSON.stringify(tally)}`);
    });
  });
}
