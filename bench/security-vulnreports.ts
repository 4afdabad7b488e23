// Vulnerability report benchmark (`node --import tsx bench/security-vulnreports.ts`), two parts:
//
// (a) Import of a generated ~50 MB Grype JSON report through the upload route
//     (POST /registry/v1/vuln_reports/{repo}?digest=…, streamed from a file): MB/s, and the growth of
//     this process's resident memory (server and client run here) over its level before the upload,
//     sampled every 10 ms. Target: growth < 150 MB. The parser alone (no HTTP, no store) is timed too.
// (b) GetVulnReport of a report with 1,000 matches against GetRepo, sequential REST calls in the
//     same run: median and p95 latency of each, and their ratio.
//
// The server runs in this process from src/ (tsx), on SQLite in a temporary folder.
import { createReadStream, createWriteStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import { createIssuer } from "../src/auth/issuer.js";
import { ADMIN_IDENTITY_UID } from "../src/authz/admin-identity.js";
import { loadConfig } from "../src/config/config.js";
import { systemClock } from "../src/core/clock.js";
import { sha256Digest } from "../src/registry/digest.js";
import { startServer } from "../src/server.js";
import { parseVulnReport } from "../src/vulnreports/formats/parse-report.js";

const TARGET_MB = Number(process.env.BENCH_REPORT_MB ?? 50);
const CALLS = Number(process.env.BENCH_CALLS ?? 300);
const MB = 1024 * 1024;

/** One Grype match shaped like real output (match details, artifact metadata, CVSS, URLs). */
function grypeMatch(i: number, descriptionBytes: number): unknown {
  const id = `CVE-2026-${String(100000 + i)}`;
  return {
    vulnerability: {
      id,
      dataSource: `https://nvd.nist.gov/vuln/detail/${id}`,
      namespace: "wolfi:distro:wolfi:rolling",
      severity: ["Critical", "High", "Medium", "Low", "Negligible", "Unknown"][i % 6],
      urls: [`https://nvd.nist.gov/vuln/detail/${id}`, `https://security.example.test/${id}`],
      description: `Generated vulnerability ${i}: ${"lorem ipsum dolor sit amet ".repeat(descriptionBytes / 27)}`,
      cvss: [
        {
          source: "nvd@nist.gov",
          type: "Primary",
          version: "3.1",
          vector: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H",
          metrics: { baseScore: 9.8, exploitabilityScore: 3.9, impactScore: 5.9 },
          vendorMetadata: {},
        },
      ],
      fix: { versions: [`1.${i % 10}.${i % 7}-r1`], state: i % 3 === 0 ? "not-fixed" : "fixed" },
      advisories: [],
      risk: 12.5,
    },
    relatedVulnerabilities: [
      {
        id: `GHSA-${(i % 9999).toString(36)}-gen-${i % 97}`,
        dataSource: "",
        namespace: "github:language:go",
        severity: "High",
        urls: [],
        cvss: [],
      },
    ],
    matchDetails: [
      {
        type: "exact-direct-match",
        matcher: "apk-matcher",
        searchedBy: {
          distro: { type: "wolfi", version: "20230201" },
          namespace: "wolfi:distro:wolfi:rolling",
          package: { name: `pkg-${i % 500}`, version: "1.0.0-r0" },
        },
        found: { vulnerabilityID: id, versionConstraint: "< 1.0.1-r0 (apk)" },
      },
    ],
    artifact: {
      id: i.toString(16).padStart(16, "0"),
      name: `pkg-${i % 500}`,
      version: "1.0.0-r0",
      type: "apk",
      locations: [
        {
          path: "/lib/apk/db/installed",
          layerID: `sha256:${"1".repeat(64)}`,
          accessPath: "/lib/apk/db/installed",
        },
      ],
      language: "",
      licenses: ["Apache-2.0"],
      cpes: [`cpe:2.3:a:pkg-${i % 500}:pkg-${i % 500}:1.0.0-r0:*:*:*:*:*:*:*`],
      purl: `pkg:apk/wolfi/pkg-${i % 500}@1.0.0-r0?arch=x86_64`,
      upstreams: [],
      metadataType: "ApkMetadata",
      metadata: {
        installedSize: 123456,
        architecture: "x86_64",
        files: [{ path: `/usr/lib/pkg-${i % 500}.so` }],
      },
    },
  };
}

/** Writes a Grype report of about `targetBytes` (or exactly `count` matches) to `file`; its match count. */
async function writeGrypeReport(
  file: string,
  targetBytes: number,
  count = Number.POSITIVE_INFINITY,
): Promise<number> {
  const out = createWriteStream(file);
  const write = (text: string) =>
    out.write(text) ? undefined : new Promise<void>((r) => out.once("drain", () => r()));
  await write('{\n "matches": [\n');
  let bytes = 0;
  let n = 0;
  while (bytes < targetBytes && n < count) {
    const text = `${n === 0 ? "" : ",\n"}${JSON.stringify(grypeMatch(n, 400), null, 1)}`;
    bytes += text.length;
    await write(text);
    n++;
  }
  await write(
    '\n ],\n "source": {"type": "image", "target": {}},\n "distro": {"name": "wolfi", "version": "20230201"},\n',
  );
  await write(
    ' "descriptor": {"name": "grype", "version": "0.87.0", "db": {"status": {"built": "2026-11-24T01:31:48Z"}}}\n}\n',
  );
  out.end();
  await finished(out);
  return n;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function timeCalls(call: () => Promise<Response>): Promise<{ p50: number; p95: number }> {
  for (let i = 0; i < 20; i++) await (await call()).arrayBuffer();
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const start = performance.now();
    const res = await call();
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "wharf-bench-vulnreports-"));
  const config = loadConfig({ dataDir, apiAddr: "127.0.0.1:0", registryAddr: "127.0.0.1:0" }, {});
  const server = await startServer(config, { clock: systemClock, logger: () => {} });
  try {
    const issuer = createIssuer({ store: server.store, issuerUrl: server.apiUrl, clock: systemClock });
    const token = await issuer.mint({
      subject: ADMIN_IDENTITY_UID,
      audience: server.apiUrl,
      ttlSeconds: 3600,
    });
    const api = async (path: string, init: RequestInit = {}) =>
      fetch(`${server.apiUrl}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${token}`, ...init.headers },
      });
    const created = async (path: string, body: unknown) => {
      const res = await api(path, {
        method: "POST",
        body: JSON.stringify(body),
        headers: { "content-type": "application/json" },
      });
      if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
      return (await res.json()) as { uid: string };
    };
    const org = await created("/iam/v2/groups", { name: "bench" });
    const repo = await created(`/registry/v2/repos/${org.uid}`, { name: "app" });
    const manifest = (n: number) =>
      Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: "application/vnd.oci.image.manifest.v1+json",
          config: {
            mediaType: "application/vnd.oci.empty.v1+json",
            digest: sha256Digest(Buffer.from("{}")),
            size: 2,
          },
          layers: [],
          annotations: { n: String(n) },
        }),
      );
    const digests: string[] = [];
    for (const n of [1, 2]) {
      const content = manifest(n);
      const digest = sha256Digest(content);
      await server.store.manifests.put(
        {
          repoUid: repo.uid,
          digest,
          mediaType: "application/vnd.oci.image.manifest.v1+json",
          content,
          createTime: Date.now(),
        },
        [],
      );
      digests.push(digest);
    }

    // (a) import of a ~50 MB report.
    const big = join(dataDir, "big-grype.json");
    const matches = await writeGrypeReport(big, TARGET_MB * MB);
    const size = (await stat(big)).size;
    const parseStart = performance.now();
    const parsed = await parseVulnReport(createReadStream(big, { highWaterMark: 256 * 1024 }));
    const parseSeconds = (performance.now() - parseStart) / 1000;
    if (parsed.matches.length !== matches) throw new Error("the parser lost matches");
    (globalThis as { gc?: () => void }).gc?.();
    await new Promise((r) => setTimeout(r, 200));
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 10);
    const importStart = performance.now();
    const res = await api(`/registry/v1/vuln_reports/${repo.uid}?digest=${digests[0]}`, {
      method: "POST",
      body: Readable.toWeb(createReadStream(big, { highWaterMark: 256 * 1024 })) as ReadableStream,
      duplex: "half",
      headers: { "content-length": String(size) },
    } as RequestInit);
    const answer = await res.text();
    const importSeconds = (performance.now() - importStart) / 1000;
    clearInterval(sampler);
    if (res.status !== 200) throw new Error(`upload: HTTP ${res.status} ${answer.slice(0, 300)}`);
    const growthMb = (peak - baseline) / MB;
    console.log(`(a) report: ${(size / MB).toFixed(1)} MB, ${matches} matches`);
    console.log(
      `    parse only:           ${(size / MB / parseSeconds).toFixed(1)} MB/s (${parseSeconds.toFixed(2)} s)`,
    );
    console.log(
      `    import over HTTP:     ${(size / MB / importSeconds).toFixed(1)} MB/s (${importSeconds.toFixed(2)} s)`,
    );
    console.log(
      `    resident memory growth during the import: ${growthMb.toFixed(0)} MB (target < 150 MB) ${growthMb < 150 ? "OK" : "OVER"}`,
    );

    // (b) GetVulnReport (1,000 matches) against GetRepo.
    const small = join(dataDir, "grype-1000.json");
    await writeGrypeReport(small, Number.POSITIVE_INFINITY, 1000);
    const up = await api(`/registry/v1/vuln_reports/${repo.uid}?digest=${digests[1]}`, {
      method: "POST",
      body: Readable.toWeb(createReadStream(small)) as ReadableStream,
      duplex: "half",
    } as RequestInit);
    if (up.status !== 200) throw new Error(`upload: HTTP ${up.status}`);
    await up.arrayBuffer();
    const getRepo = await timeCalls(() => api(`/registry/v2/repos/${repo.uid}`));
    const getReport = await timeCalls(() =>
      api(`/registry/v1/repos/${repo.uid}/digests/${digests[1]}/vulnreport`),
    );
    console.log(`(b) ${CALLS} sequential calls each`);
    console.log(
      `    GetRepo:                       p50 ${getRepo.p50.toFixed(2)} ms, p95 ${getRepo.p95.toFixed(2)} ms`,
    );
    console.log(
      `    GetVulnReport (1,000 matches): p50 ${getReport.p50.toFixed(2)} ms, p95 ${getReport.p95.toFixed(2)} ms`,
    );
    console.log(`    ratio of medians: ${(getReport.p50 / getRepo.p50).toFixed(1)}×`);
  } finally {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
