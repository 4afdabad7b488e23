import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import {
  BLOB_STORE_BOUND_SETTING,
  BlobStoreMismatchError,
  STORE_ID_SETTING,
} from "../../src/storage/blob-store-identity.js";
import { BLOB_STORE_ID_KEY } from "../../src/storage/blobs/blob-layout.js";
import { createTestDatabase, engineSkipReason } from "../support/databases.js";
import { type BuiltImage, OCI_MANIFEST, pushImage } from "../support/registry-push.js";
import { WHARF } from "../support/wharf-process.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// A blob store belongs to one metadata store: `wharf gc` and `wharf serve` refuse a blob store of
// another database with one line naming both, before touching a blob; an existing deployment
// without ids still starts; several servers on one PostgreSQL database must share one blob store.

const run = promisify(execFile);
const pgSkip = engineSkipReason("postgres");
const folders: string[] = [];
after(() => Promise.all(folders.map((f) => rm(f, { recursive: true, force: true }))));

async function tempFolder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "wharf-binding-e2e-"));
  folders.push(dir);
  return dir;
}

/** Every file under `dir` with its size, sorted: what "nothing was deleted" compares. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
  const sized = await Promise.all(files.map(async (f) => `${relative(dir, f)} ${(await stat(f)).size}`));
  return sized.sort();
}

/** Pushes an image to `acme/app:latest` of `server` (creating the organization). */
async function pushAcmeImage(server: TestServer, seed: string, createOrg = true): Promise<BuiltImage> {
  if (createOrg) await server.create("/iam/v2/groups", { name: "acme" });
  return pushImage(server, "acme/app", "latest", await server.registryToken(), seed);
}

/** Pulls `acme/app:latest` and each of its blobs from `server`, asserting the bytes. */
async function assertPullable(server: TestServer, image: BuiltImage): Promise<void> {
  const token = await server.registryToken();
  const manifest = await server.registry("/v2/acme/app/manifests/latest", {
    token,
    headers: { accept: OCI_MANIFEST },
  });
  assert.equal(manifest.status, 200);
  assert.deepEqual(Buffer.from(await manifest.arrayBuffer()), image.manifest);
  for (const [digest, bytes] of image.blobs) {
    const blob = await server.registry(`/v2/acme/app/blobs/${digest}`, { token });
    assert.equal(blob.status, 200, `blob ${digest}`);
    assert.deepEqual(Buffer.from(await blob.arrayBuffer()), bytes);
  }
}

/** Runs the real CLI; resolves with its exit code and output (never rejects on a non-zero exit). */
async function wharf(
  args: string[],
  cwd?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("WHARF_")));
  try {
    // A serve that does not refuse would run forever: the time limit turns that into a failure.
    const { stdout, stderr } = await run(process.execPath, [WHARF, ...args], { cwd, env, timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const { code, stdout, stderr } = err as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

/** Asserts the CLI refused with exactly one line naming the database and the blob folder. */
function assertRefusedOneLine(
  result: { code: number; stdout: string; stderr: string },
  database: string,
  blobs: string,
) {
  assert.equal(result.code, 1, result.stderr);
  assert.equal(result.stdout, "", "no report: nothing ran");
  const lines = result.stderr.split("\n").filter((l) => l !== "");
  assert.equal(lines.length, 1, `one line, no stack trace: ${result.stderr}`);
  assert.ok(
    lines[0]?.startsWith(`wharf: blob store ${blobs} does not belong to database ${database}: `),
    lines[0],
  );
}

describe("wharf gc with another deployment's database [postgres]", { skip: pgSkip }, () => {
  const pg = createTestDatabase("postgres");
  let cwd: string;
  let blobFolder: string;
  let deployment: TestServer;
  let image: BuiltImage;
  let filesBefore: string[];

  before(async () => {
    // The user's story: a SQLite deployment in ./wharf-data with a pushed image.
    cwd = await tempFolder();
    blobFolder = join(cwd, "wharf-data", "blobs");
    deployment = await startTestServer({ config: { dataDir: join(cwd, "wharf-data") } });
    image = await pushAcmeImage(deployment, "kept");
    filesBefore = await filesUnder(blobFolder);
    // Older than gc's --grace below, so a gc trusting the wrong database would delete them.
    await new Promise((r) => setTimeout(r, 1100));
  });
  after(async () => {
    await deployment?.close();
    await pg.dispose();
  });

  const gcWith = (databaseUrl: string) =>
    wharf(["gc", "--database-url", databaseUrl, "--grace", "1s", "--window", "1s"], cwd);

  it("refuses a fresh PostgreSQL database: one line naming both, exit 1, every blob file still there", async () => {
    const { databaseUrl } = await pg.freshOptions();
    assert.ok(databaseUrl);
    assertRefusedOneLine(await gcWith(databaseUrl), databaseUrl, blobFolder);
    assert.deepEqual(await filesUnder(blobFolder), filesBefore);
    await assertPullable(deployment, image);
  });

  it("refuses the database of a PostgreSQL deployment with its own blob store", async () => {
    const { databaseUrl } = await pg.freshOptions();
    assert.ok(databaseUrl);
    const other = await startTestServer({ databaseUrl });
    await pushAcmeImage(other, "other deployment's image");
    await other.close();
    assertRefusedOneLine(await gcWith(databaseUrl), databaseUrl, blobFolder);
    assert.deepEqual(await filesUnder(blobFolder), filesBefore);
    await assertPullable(deployment, image);
  });

  it("still runs against its own database, keeping the tagged image", async () => {
    const result = await wharf(["gc", "--grace", "1s", "--window", "1s"], cwd);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(JSON.parse(result.stdout).blobs, 0);
    await assertPullable(deployment, image);
  });
});

describe("wharf serve refuses another deployment's blob store", () => {
  const pg = createTestDatabase("postgres");
  after(() => pg.dispose());

  /** A deployment served once (ids stamped), with an image; its data folder stays. */
  async function servedOnce(opts: { databaseUrl?: string; blobStore?: string } = {}) {
    const dataDir = await tempFolder();
    const server = await startTestServer({
      ...(opts.databaseUrl ? { databaseUrl: opts.databaseUrl } : {}),
      config: { dataDir, ...(opts.blobStore ? { blobStore: opts.blobStore } : {}) },
    });
    await pushAcmeImage(server, `image in ${dataDir}`);
    await server.close();
    return { dataDir, blobFolder: opts.blobStore ?? join(dataDir, "blobs") };
  }
  /**
   * The SQLite deployment whose blob folder both tests offer to another database: served once, on
   * first use (each server start costs ~1 s of CPU, and either test needs just some other deployment's).
   */
  let other: ReturnType<typeof servedOnce> | undefined;
  const otherDeployment = () => {
    other ??= servedOnce();
    return other;
  };
  const serve = (args: string[]) =>
    wharf(["serve", "--api-addr", "127.0.0.1:0", "--registry-addr", "127.0.0.1:0", ...args]);

  it("on SQLite: one line naming the SQLite file and the blob folder, exit 1", async () => {
    const a = await servedOnce();
    const b = await otherDeployment();
    const filesBefore = await filesUnder(b.blobFolder);
    const result = await serve(["--data-dir", a.dataDir, "--blob-store", b.blobFolder]);
    assertRefusedOneLine(result, join(a.dataDir, "wharf.db"), b.blobFolder);
    assert.deepEqual(await filesUnder(b.blobFolder), filesBefore);
  });

  it("on PostgreSQL: one line naming the database URL and the blob folder, exit 1", {
    skip: pgSkip,
  }, async () => {
    const { databaseUrl } = await pg.freshOptions();
    assert.ok(databaseUrl);
    await servedOnce({ databaseUrl });
    const b = await otherDeployment();
    const result = await serve(["--database-url", databaseUrl, "--blob-store", b.blobFolder]);
    assertRefusedOneLine(result, databaseUrl, b.blobFolder);
  });
});

describe("wharf serve binds what it can", () => {
  it("adopts a fresh blob store for a database that stores no blobs yet", async () => {
    const dataDir = await tempFolder();
    const first = await startTestServer({ config: { dataDir } });
    const id = await first.store.settings.get(STORE_ID_SETTING);
    await first.close();
    const fresh = join(await tempFolder(), "new-blobs");
    const second = await startTestServer({ config: { dataDir, blobStore: fresh } });
    try {
      assert.equal((await readFile(join(fresh, BLOB_STORE_ID_KEY), "utf8")).trim(), id);
      await assertPullable(second, await pushAcmeImage(second, "into the adopted store"));
    } finally {
      await second.close();
    }
  });

  it("starts a deployment from before ids (metadata and blobs without them), stamping both", async () => {
    const dataDir = await tempFolder();
    const first = await startTestServer({ config: { dataDir } });
    const image = await pushAcmeImage(first, "from before ids");
    await first.close();
    // Back to how a deployment of an earlier version looks: no id on either side.
    const db = new Database(join(dataDir, "wharf.db"));
    db.prepare("delete from settings where key in (?, ?)").run(STORE_ID_SETTING, BLOB_STORE_BOUND_SETTING);
    db.close();
    await rm(join(dataDir, "blobs", BLOB_STORE_ID_KEY));
    const upgraded = await startTestServer({ config: { dataDir } });
    try {
      await assertPullable(upgraded, image);
      const id = await upgraded.store.settings.get(STORE_ID_SETTING);
      assert.match(id ?? "", /^[0-9a-f]{32}$/);
      assert.equal((await readFile(join(dataDir, "blobs", BLOB_STORE_ID_KEY), "utf8")).trim(), id);
    } finally {
      await upgraded.close();
    }
  });
});

describe("several servers on one PostgreSQL database [postgres]", { skip: pgSkip }, () => {
  const pg = createTestDatabase("postgres");
  const servers: TestServer[] = [];
  let databaseUrl: string;
  let shared: string;
  let image: BuiltImage;
  before(async () => {
    databaseUrl = (await pg.freshOptions()).databaseUrl ?? "";
    shared = join(await tempFolder(), "shared-blobs");
    const first = await startTestServer({ databaseUrl, config: { blobStore: shared } });
    servers.push(first);
    image = await pushAcmeImage(first, "pushed through the first server");
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await pg.dispose();
  });

  it("a second server with its own blob folder refuses to start", async () => {
    const own = join(await tempFolder(), "own-blobs");
    await assert.rejects(startTestServer({ databaseUrl, config: { blobStore: own } }), (err: Error) => {
      assert.ok(err instanceof BlobStoreMismatchError, String(err));
      assert.ok(err.message.includes(own) && err.message.includes(databaseUrl), err.message);
      return true;
    });
    await assert.rejects(stat(join(own, BLOB_STORE_ID_KEY)), "the refused folder was not stamped");
  });

  it("a second server on the same blob folder runs and serves what the first pushed", async () => {
    const second = await startTestServer({ databaseUrl, config: { blobStore: shared } });
    servers.push(second);
    await assertPullable(second, image);
  });

  it("servers starting at once on a fresh database and one blob folder all run, with one id", async () => {
    const { databaseUrl: fresh } = await pg.freshOptions();
    const folder = join(await tempFolder(), "together");
    const started = await Promise.all(
      [1, 2, 3].map(() => startTestServer({ databaseUrl: fresh ?? "", config: { blobStore: folder } })),
    );
    servers.push(...started);
    const id = await started[0]?.store.settings.get(STORE_ID_SETTING);
    assert.equal((await readFile(join(folder, BLOB_STORE_ID_KEY), "utf8")).trim(), id);
  });
});
