import assert from "node:assert/strict";
import {
  mkdir,
  mkdtemp,
  open as openFile,
  readdir,
  readFile,
  rm,
  stat,
  truncate,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type OpenStoreOptions, openStore } from "../../src/storage/sql/open-store.js";
import {
  createTestDatabase,
  ENGINES,
  type EngineName,
  engineSkipReason,
  type TestDatabase,
} from "../support/databases.js";
import {
  type BuiltImage,
  buildImage,
  fetchRegistryClient,
  pushBlob,
  pushImage,
  sha256,
} from "../support/registry-push.js";
import {
  adminTokenOf,
  runWharf,
  serveProcess,
  startWharf,
  stopProcess,
  type WharfProcess,
} from "../support/wharf-process.js";

// `wharf backup` while pushes run, `wharf restore` into a fresh deployment, `wharf fsck` on it
// (issue 34), on both engines: every push acknowledged before the backup started pulls from the
// restored deployment with its exact bytes and `fsck --deep` is clean; then blobs are damaged behind
// the registry's back (bytes flipped, a file truncated) and a manifest removed under its tag, and
// fsck names what each breaks, the registry refuses the truncated blob (500, never short bytes),
// `--repair` deletes only the dangling tag. Refusals: a non-empty backup folder, a non-empty restore
// target, PostgreSQL without pg_dump.

const ORG = "bk";
const BEFORE = 4;
const DURING = 20;

interface Pushed {
  repo: string;
  tag: string;
  image: BuiltImage;
  acknowledgedAt: number;
}

/** The blob file of `digest` in a filesystem blob store rooted at `root`. */
const blobFile = (root: string, digest: string) => {
  const hex = digest.slice("sha256:".length);
  return join(root, "blobs", "sha256", hex.slice(0, 2), hex);
};

/** A deployment: its data dir and the environment naming its database. */
interface Deployment {
  dataDir: string;
  env: Record<string, string>;
  store: OpenStoreOptions;
}

const cliEnv = (d: Deployment) => ({ ...process.env, ...d.env, WHARF_DATA_DIR: d.dataDir });

for (const engine of ENGINES) {
  describe(`backup, restore and fsck [${engine}]`, { skip: engineSkipReason(engine) }, () => {
    let db: TestDatabase;
    let scratch: string;
    let source: Deployment;
    let restored: Deployment;
    let server: WharfProcess | undefined;
    let restoredServer: WharfProcess | undefined;
    const backupDir = () => join(scratch, "backup");
    const pushed: Pushed[] = [];
    let backupStartedAt = 0;

    const deployment = async (name: string, fresh: boolean): Promise<Deployment> => {
      const dataDir = join(scratch, name);
      await mkdir(dataDir);
      if (engine === "sqlite") return { dataDir, env: {}, store: { sqlitePath: join(dataDir, "wharf.db") } };
      const options = fresh ? await db.emptyOptions() : await db.options();
      return { dataDir, env: { WHARF_DATABASE_URL: options.databaseUrl as string }, store: options };
    };
    const registryOf = async (d: Deployment, s: WharfProcess) =>
      fetchRegistryClient(s.registryUrl, {
        token: await adminTokenOf(d.dataDir, s.apiUrl, { audience: s.registryUrl, env: d.env }),
      });

    before(async () => {
      db = createTestDatabase(engine as EngineName);
      scratch = await mkdtemp(join(tmpdir(), `wharf-backup-${engine}-`));
      source = await deployment("source", false);
      restored = await deployment("restored", true);
      server = await serveProcess(source.dataDir, source.env);
      const apiToken = await adminTokenOf(source.dataDir, server.apiUrl, { env: source.env });
      const res = await fetch(`${server.apiUrl}/iam/v2/groups`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiToken}` },
        body: JSON.stringify({ name: ORG }),
      });
      assert.equal(res.status, 200, await res.text());
    });
    after(async () => {
      for (const s of [server, restoredServer]) if (s) await stopProcess(s, "SIGKILL");
      await db.dispose();
      await rm(scratch, { recursive: true, force: true });
    });

    it("backs up while 20 pushes run; the restored deployment serves every push acknowledged before, and fsck --deep is clean", async () => {
      assert.ok(server);
      const registry = await registryOf(source, server);
      let reached: () => void = () => {};
      const someDuring = new Promise<void>((resolve) => {
        reached = resolve;
      });
      const push = async (i: number) => {
        const repo = `${ORG}/app${i % 3}`;
        const tag = `v${i}`;
        // Two layers each, one shared by all: a backup must copy a shared blob once.
        const image = buildImage(`image ${i}`, [`layer ${i} ${"x".repeat(i * 101)}`, "shared base layer"]);
        await pushImage(registry, repo, tag, undefined, image);
        pushed.push({ repo, tag, image, acknowledgedAt: performance.now() });
        if (pushed.length === BEFORE + 3) reached();
      };
      for (let i = 0; i < BEFORE; i++) await push(i);
      // Two at a time, so they are spread over the time the backup takes to start and run.
      let next = BEFORE;
      const pushes = Promise.all(
        Array.from({ length: 2 }, async () => {
          while (next < BEFORE + DURING) await push(next++);
        }),
      );
      pushes.catch(() => {});
      // Once some of the concurrent pushes are through, so the backup runs among the others.
      await Promise.race([someDuring, pushes]);
      backupStartedAt = performance.now();
      const backup = startWharf(["backup", "--to", backupDir()], cliEnv(source));
      const [run] = await Promise.all([backup.finished, pushes]);
      assert.equal(run.code, 0, run.stderr);
      const report = JSON.parse(run.stdout) as { blobs: number; linked: number; missing: unknown[] };
      assert.deepEqual(report.missing, []);
      assert.ok(
        report.blobs >= BEFORE * 2 + 1,
        `the backup holds the blobs of the pushes before it (${report.blobs})`,
      );
      assert.equal(report.linked, report.blobs, "a filesystem store on the same device is hard-linked");
      const manifest = JSON.parse(await readFile(join(backupDir(), "wharf-backup.json"), "utf8"));
      assert.equal(manifest.engine, engine);
      assert.match(manifest.storeId, /^[0-9a-f]{32}$/);
      assert.match(manifest.database.digest, /^sha256:[0-9a-f]{64}$/);
      for (const blob of manifest.blobs)
        assert.equal((await stat(join(backupDir(), blob.path))).size, blob.size);

      const restore = await runWharf(["restore", "--from", backupDir()], cliEnv(restored));
      assert.equal(restore.code, 0, restore.stderr);
      restoredServer = await serveProcess(restored.dataDir, restored.env);
      const pull = await registryOf(restored, restoredServer);
      const before = pushed.filter((p) => p.acknowledgedAt < backupStartedAt);
      assert.ok(before.length >= BEFORE + 3);
      assert.ok(pushed.length === BEFORE + DURING, "every push went through");
      for (const p of before) {
        const res = await pull.registry(`/v2/${p.repo}/manifests/${p.tag}`, {
          headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
        });
        assert.equal(res.status, 200, `${p.repo}:${p.tag}`);
        const bytes = Buffer.from(await res.arrayBuffer());
        assert.equal(sha256(bytes), p.image.digest);
        for (const [digest, expected] of p.image.blobs) {
          const blob = await pull.registry(`/v2/${p.repo}/blobs/${digest}`);
          assert.equal(blob.status, 200, `${p.repo} ${digest}`);
          const got = Buffer.from(await blob.arrayBuffer());
          assert.equal(sha256(got), digest);
          assert.deepEqual(got, expected);
        }
      }
      const fsck = await runWharf(["fsck", "--deep"], cliEnv(restored));
      assert.equal(fsck.code, 0, fsck.stdout + fsck.stderr);
      assert.match(
        fsck.stdout,
        /^clean: \d+ blobs checked \(sizes and digests\), 0 damaged, 0 dangling tags/m,
      );
      assert.match(fsck.stdout, /store ids match$/m);
    });

    it("fsck names the images a flipped and a truncated blob break; the registry refuses the truncated one; --repair deletes only a dangling tag", async () => {
      assert.ok(restoredServer);
      const blobs = join(restored.dataDir, "blobs");
      const [a, b, c] = pushed.filter((p) => p.acknowledgedAt < backupStartedAt) as [Pushed, Pushed, Pushed];
      const flipped = a.image.layerDigests[0] as string;
      const truncated = b.image.configDigest;
      const handle = await openFile(blobFile(blobs, flipped), "r+");
      await handle.write(Buffer.from([0xde, 0xad]), 0, 2, 3);
      await handle.close();
      await truncate(blobFile(blobs, truncated), 5);
      // An orphan is no damage: a blob no manifest references.
      const pull = await registryOf(restored, restoredServer);
      const orphan = await pushBlob(pull, `${ORG}/junk`, "nobody references me");

      const shallow = await runWharf(["fsck"], cliEnv(restored));
      assert.equal(shallow.code, 1, shallow.stdout + shallow.stderr);
      assert.match(
        shallow.stdout,
        new RegExp(`^DAMAGE blob ${truncated} holds 5 bytes, recorded \\d+$`, "m"),
      );
      assert.match(shallow.stdout, new RegExp(`^  breaks ${b.repo}:${b.tag} \\(${b.image.digest}\\)$`, "m"));
      assert.doesNotMatch(shallow.stdout, new RegExp(`DAMAGE blob ${flipped}`), "sizes only without --deep");
      assert.match(shallow.stdout, new RegExp(`^orphan blob ${orphan} `, "m"));

      const deep = await runWharf(["fsck", "--deep", "--json"], cliEnv(restored));
      assert.equal(deep.code, 1, deep.stderr);
      const report = JSON.parse(deep.stdout) as {
        damaged: boolean;
        damagedBlobs: { digest: string; problem: string; images: string[] }[];
      };
      assert.equal(report.damaged, true);
      const byDigest = new Map(report.damagedBlobs.map((d) => [d.digest, d]));
      assert.equal(byDigest.get(flipped)?.problem, "digest");
      assert.deepEqual(byDigest.get(flipped)?.images, [`${a.repo}:${a.tag} (${a.image.digest})`]);
      assert.equal(byDigest.get(truncated)?.problem, "size");
      assert.equal(report.damagedBlobs.length, 2);

      // The read path: a blob shorter than its record is a 500 with an OCI body and a log line.
      const res = await pull.registry(`/v2/${b.repo}/blobs/${truncated}`);
      assert.equal(res.status, 500);
      assert.equal(((await res.json()) as { errors: { code: string }[] }).errors[0]?.code, "INTERNAL");
      const head = await pull.registry(`/v2/${b.repo}/blobs/${truncated}`, { method: "HEAD" });
      assert.equal(head.status, 500);
      assert.match(restoredServer.output(), /does not match its record: blobs\/sha256\/\S+ holds 5 bytes/);

      // A tag whose manifest is gone (removed behind the registry's back): dangling.
      const store = await openStore(restored.store);
      try {
        const group = await store.groups.getByName("", ORG);
        const repo = group && (await store.repos.getByName(group.uid, c.repo.split("/")[1] as string));
        assert.ok(repo);
        assert.equal(await store.manifests.delete(repo.uid, c.image.digest), true);
        const dangling = await runWharf(["fsck"], cliEnv(restored));
        assert.equal(dangling.code, 1);
        assert.match(
          dangling.stdout,
          new RegExp(`^DAMAGE tag ${c.repo}:${c.tag} names ${c.image.digest}`, "m"),
        );

        const repair = await runWharf(["fsck", "--repair"], cliEnv(restored));
        assert.equal(repair.code, 1, "the damaged blobs remain damage");
        assert.match(repair.stdout, new RegExp(`^REPAIRED tag ${c.repo}:${c.tag} `, "m"));
        assert.equal(await store.tags.getByName(repo.uid, c.tag), undefined);
        const history = await store.tags.history({ repoUid: repo.uid, tagName: c.tag, limit: 10 });
        assert.equal(history.at(-1)?.digest, "", "the delete is in the tag's history");
        // Referenced data stays, damaged or not; the orphan is left to gc.
        await stat(blobFile(blobs, flipped));
        await stat(blobFile(blobs, truncated));
        await stat(blobFile(blobs, orphan));
        const again = await runWharf(["fsck"], cliEnv(restored));
        assert.doesNotMatch(again.stdout, /DAMAGE tag/);
      } finally {
        await store.close();
      }
    });

    it("refuses a non-empty backup folder and a non-empty restore target, changing nothing", async () => {
      const busy = join(scratch, "busy");
      await mkdir(busy);
      await writeFile(join(busy, "keep.txt"), "mine");
      const backup = await runWharf(["backup", "--to", busy], cliEnv(source));
      assert.equal(backup.code, 1);
      assert.match(backup.stderr, /is not empty \(1 entries\).*nothing was written/);
      assert.deepEqual(await readdir(busy), ["keep.txt"]);

      const before = await runWharf(["fsck", "--json"], cliEnv(restored));
      const restore = await runWharf(["restore", "--from", backupDir()], cliEnv(restored));
      assert.equal(restore.code, 1);
      assert.match(restore.stderr, /is not empty.*nothing was changed/);
      const afterwards = await runWharf(["fsck", "--json"], cliEnv(restored));
      assert.deepEqual(JSON.parse(afterwards.stdout), JSON.parse(before.stdout));

      const nowhere = await runWharf(
        ["restore", "--from", join(scratch, "no-such-backup")],
        cliEnv(restored),
      );
      assert.equal(nowhere.code, 1);
      assert.match(nowhere.stderr, /holds no finished Wharf backup/);
    });

    if (engine === "postgres") {
      it("names pg_dump when it is not installed, writing nothing", async () => {
        const emptyBin = join(scratch, "no-pg-bin");
        await mkdir(emptyBin);
        const target = join(scratch, "never");
        const run = await runWharf(["backup", "--to", target], {
          ...cliEnv(source),
          WHARF_PG_BINDIR: emptyBin,
        });
        assert.equal(run.code, 1);
        assert.match(run.stderr, /pg_dump is not installed/);
        await assert.rejects(stat(target), { code: "ENOENT" });
      });
    }
  });
}
