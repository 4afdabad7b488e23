// What one push, one pull and one API write cost the database (`npm run bench:database`), for
// sizing PostgreSQL under replicas (docs/guide/scaling.md). Starts a throwaway PostgreSQL cluster
// and one `wharf serve` on it (a filesystem blob store), warms up, then runs BENCH_OPS (200) of each
// operation one after another and reads PostgreSQL's own counters around each batch:
// pg_stat_database (transactions committed, rows returned, inserted, updated, deleted) and the WAL
// position (bytes of WAL written), plus Wharf's CPU time. Prints per-operation figures; a report,
// not a test (exits 0 unless something errored).
//
// Operations: "push" = two blobs (POST ?digest=, monolithic) and a manifest PUT to a new tag;
// "pull" = manifest GET by tag and one blob GET; "api write" = a repo description PATCH;
// "api get" = a repo GET. Every request carries a token (the server verifies and authorizes it).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { findPostgresBin, throwawayPostgres } from "../test/support/postgres-cluster.js";
import { buildImage, OCI_MANIFEST } from "../test/support/registry-push.js";
import { adminTokenOf, serveProcess, stopProcess } from "../test/support/wharf-process.js";
import { cpuSecondsOf } from "./registry/processes.js";

const OPS = Number(process.env.BENCH_OPS ?? 200);
const bin = findPostgresBin();
if (!bin) throw new Error("bench:database needs the PostgreSQL server binaries (apt-get install postgresql)");
const server = await throwawayPostgres(bin);
const url = server.urlOf("wharf_bench_database");
const dataDir = await mkdtemp(join(tmpdir(), "wharf-bench-db-"));
const wharf = await serveProcess(dataDir, { WHARF_DATABASE_URL: url });
const pid = wharf.child.pid ?? 0;
try {
  const token = await adminTokenOf(dataDir, wharf.apiUrl, { env: { WHARF_DATABASE_URL: url } });
  const registryToken = await adminTokenOf(dataDir, wharf.apiUrl, {
    audience: wharf.registryUrl,
    env: { WHARF_DATABASE_URL: url },
  });
  const call = async (base: string, bearer: string, path: string, init: RequestInit = {}, expect = 200) => {
    const res = await fetch(new URL(path, base), {
      ...init,
      headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${bearer}` },
    });
    const body = Buffer.from(await res.arrayBuffer());
    if (res.status !== expect)
      throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${body.toString()}`);
    return body;
  };
  const api = (path: string, init?: RequestInit, expect?: number) =>
    call(wharf.apiUrl, token, path, init, expect);
  const registry = (path: string, init?: RequestInit, expect?: number) =>
    call(wharf.registryUrl, registryToken, path, init, expect);

  const org = JSON.parse(
    (
      await api("/iam/v2/groups", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "bench" }),
      })
    ).toString(),
  ) as { uid: string };
  const repo = JSON.parse(
    (
      await api(`/registry/v2/repos/${org.uid}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "app" }),
      })
    ).toString(),
  ) as { uid: string };

  let n = 0;
  const pushed: { tag: string; blob: string }[] = [];
  const operations: Record<string, () => Promise<void>> = {
    async push() {
      const tag = `t${++n}`;
      const image = buildImage(`bench ${n}`);
      for (const [digest, bytes] of image.blobs) {
        await registry(`/v2/bench/app/blobs/uploads/?digest=${digest}`, { method: "POST", body: bytes }, 201);
      }
      await registry(
        `/v2/bench/app/manifests/${tag}`,
        { method: "PUT", headers: { "content-type": OCI_MANIFEST }, body: image.manifest },
        201,
      );
      pushed.push({ tag, blob: image.layerDigests[0] ?? "" });
    },
    async pull() {
      const { tag, blob } = pushed[n++ % pushed.length] ?? { tag: "", blob: "" };
      await registry(`/v2/bench/app/manifests/${tag}`, { headers: { accept: OCI_MANIFEST } });
      await registry(`/v2/bench/app/blobs/${blob}`);
    },
    async "api write"() {
      await api(`/registry/v2/repos/${repo.uid}`, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ description: `bench ${++n}` }),
      });
    },
    async "api get"() {
      await api(`/registry/v2/repos/${repo.uid}`);
    },
  };

  const admin = new pg.Client({ connectionString: server.adminUrl });
  await admin.connect();
  const counters = async () => {
    const { rows } = await admin.query<Record<string, string>>(
      `SELECT xact_commit, tup_returned + tup_fetched AS read, tup_inserted, tup_updated, tup_deleted,
              pg_current_wal_lsn() AS lsn
         FROM pg_stat_database WHERE datname = $1`,
      ["wharf_bench_database"],
    );
    return rows[0] as Record<string, string>;
  };
  const lsnBytes = (lsn: string) => {
    const [hi = "0", lo = "0"] = lsn.split("/");
    return Number.parseInt(hi, 16) * 2 ** 32 + Number.parseInt(lo, 16);
  };

  // Warm-up: compiled code paths and caches, like a server that has been running.
  for (let i = 0; i < 30; i++) for (const op of Object.values(operations)) await op();
  console.log(
    `${OPS} of each operation, one at a time, Wharf on PostgreSQL (${url.replace(/\/\/.*@/, "//")})`,
  );
  console.log(
    "operation  | transactions | rows read | inserted | updated | deleted | WAL bytes | Wharf CPU µs",
  );
  for (const [name, op] of Object.entries(operations)) {
    // pg_stat_database is updated when a backend reports (at most every 500 ms, PGSTAT_MIN_INTERVAL)
    // and at transaction end for this session: wait for it to settle around each batch.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await admin.query("SELECT pg_stat_clear_snapshot()");
    const before = await counters();
    const cpuBefore = cpuSecondsOf(pid);
    for (let i = 0; i < OPS; i++) await op();
    const cpu = cpuSecondsOf(pid) - cpuBefore;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await admin.query("SELECT pg_stat_clear_snapshot()");
    const after = await counters();
    const per = (key: string) => ((Number(after[key]) - Number(before[key])) / OPS).toFixed(1);
    const wal = ((lsnBytes(after.lsn ?? "0/0") - lsnBytes(before.lsn ?? "0/0")) / OPS).toFixed(0);
    console.log(
      `${name.padEnd(10)} | ${per("xact_commit").padStart(12)} | ${per("read").padStart(9)} | ${per("tup_inserted").padStart(8)} | ${per("tup_updated").padStart(7)} | ${per("tup_deleted").padStart(7)} | ${wal.padStart(9)} | ${((cpu / OPS) * 1e6).toFixed(0).padStart(12)}`,
    );
  }
  console.log("(rows and transactions include the background work those operations cause: event delivery");
  console.log(
    " bookkeeping, pull-time batches, revocation polling every second; no subscription exists here)",
  );
  await admin.end();
} finally {
  await stopProcess(wharf);
  await rm(dataDir, { recursive: true, force: true });
}
process.exit(0);
