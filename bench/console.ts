// Console benchmark (`npm run bench:console`): how long the repository page takes to show a repo
// with 200 tags whose `latest` has a 1,000-record history, in headless Chromium (Debian's, through
// playwright-core, as the e2e tests run it). Target: ≤ 300 ms.
//
// What is measured: the page's own Performance API, from navigation start to the mark the page
// sets once the tag list and the timeline are rendered (`wharf:repo-page-rendered`, a React effect
// after the commit). That covers loading index.html and the bundle, the page's chunk, the API
// calls (repo, group path, 200 tags in one page, the registry token (one request, ADR 0061) and the 1,000-record
// history) and rendering. The per-record details (architectures, size, report) of the first
// records load after the mark. BENCH_RESOURCES=1 also prints the last load's requests (start-end,
// ms since navigation start) to see the critical path. Each run loads the page BENCH_LOADS times (default 7) after one
// warm-up load (bundle cache and server JIT) and prints min, median and max.
//
// The server runs in this process from the build in dist/ (the npm script builds it first).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createIssuer } from "../dist/auth/issuer.js";
import { ADMIN_IDENTITY_UID } from "../dist/authz/admin-identity.js";
import { loadConfig } from "../dist/config/config.js";
import { systemClock } from "../dist/core/clock.js";
import { startServer } from "../dist/server.js";
import { launchChromium } from "../test/support/chromium.js";
import { pushImage, type RegistryClient } from "../test/support/registry-push.js";

const TAGS = 200;
const HISTORY = 1000;
const IMAGES = 50;
const LOADS = Number(process.env.BENCH_LOADS ?? 7);
const TARGET_MS = 300;
const MARK = "wharf:repo-page-rendered";

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "wharf-bench-console-"));
  const config = loadConfig({ dataDir, apiAddr: "127.0.0.1:0", registryAddr: "127.0.0.1:0" }, {});
  const server = await startServer(config, { logger: () => {} });
  try {
    const issuer = createIssuer({ store: server.store, issuerUrl: server.apiUrl, clock: systemClock });
    const token = await issuer.mint({
      subject: ADMIN_IDENTITY_UID,
      audience: server.apiUrl,
      ttlSeconds: 3600,
    });
    const registryToken = await issuer.mint({
      subject: ADMIN_IDENTITY_UID,
      audience: server.registryUrl,
      ttlSeconds: 3600,
    });
    const api = async (path: string, body: unknown): Promise<{ uid: string }> => {
      const res = await fetch(`${server.apiUrl}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as { uid: string };
    };
    const registry: RegistryClient = {
      registry: (path, init = {}) =>
        fetch(`${server.registryUrl}${path}`, {
          method: init.method ?? "GET",
          headers: { ...init.headers, ...(init.token ? { authorization: `Bearer ${init.token}` } : {}) },
          redirect: "manual",
          ...(init.body === undefined ? {} : { body: init.body, duplex: "half" }),
        } as RequestInit),
    };

    const seeded = Date.now();
    const org = (await api("/iam/v2/groups", { name: "bench" })).uid;
    const repo = (await api(`/registry/v2/repos/${org}`, { name: "app" })).uid;
    const digests: string[] = [];
    for (let i = 0; i < IMAGES; i++) {
      digests.push(
        (await pushImage(registry, "bench/app", `build-${i}`, registryToken, `bench image ${i}`)).digest,
      );
    }
    // The pushes made 50 tags and 50 history records of their own; `latest` moves 1,000 times.
    for (let i = 0; i < HISTORY; i++) {
      await api(`/registry/v2/tags/${repo}`, { name: "latest", digest: digests[i % IMAGES] });
    }
    for (let i = IMAGES + 1; i < TAGS; i++) {
      await api(`/registry/v2/tags/${repo}`, {
        name: `v1.${i}`,
        digest: digests[i % IMAGES],
        deprecated: i % 10 === 0,
      });
    }
    console.log(`seeded ${TAGS} tags and a ${HISTORY}-record history in ${Date.now() - seeded} ms`);

    const browser = await launchChromium();
    try {
      // Signed in as the token form would leave it (the root tsconfig has no DOM types: a string script).
      const session = JSON.stringify(JSON.stringify({ token, method: "token" }));
      await browser.addInitScript(`sessionStorage.setItem("wharf.console.session", ${session})`);
      const url = `${server.apiUrl}/repos/${repo.split("/").map(encodeURIComponent).join("/")}`;
      const timings: number[] = [];
      for (let load = 0; load <= LOADS; load++) {
        const page = await browser.newPage();
        await page.goto(url);
        const ms = await page.waitForFunction(
          (mark: string) => performance.getEntriesByName(mark)[0]?.startTime,
          MARK,
          { timeout: 30_000, polling: 10 },
        );
        const rendered = Number(await ms.jsonValue());
        const rows = await page.locator("table.tags tbody tr").count();
        const more = (await page.getByRole("button", { name: /Show older records/ }).textContent()) ?? "";
        if (rows !== TAGS) throw new Error(`expected ${TAGS} tag rows, saw ${rows}`);
        if (!more.includes(`(${HISTORY - 50} more)`))
          throw new Error(`expected ${HISTORY} records: "${more}"`);
        if (load > 0) timings.push(rendered);
        if (process.env.BENCH_RESOURCES && load === LOADS) {
          const entries = await page.evaluate(() =>
            performance.getEntriesByType("resource").map((e) => {
              const end = e.startTime + e.duration;
              return `${e.startTime.toFixed(0)}-${end.toFixed(0)} ms ${e.name.replace(/^https?:\/\/[^/]+/, "")}`;
            }),
          );
          console.log(entries.join("\n"));
        }
        await page.close();
      }
      timings.sort((a, b) => a - b);
      const median = timings[Math.floor(timings.length / 2)]!;
      const format = (v: number) => `${v.toFixed(0)} ms`;
      console.log(
        `repository page, ${TAGS} tags, ${HISTORY}-record history: median ${format(median)} ` +
          `(min ${format(timings[0]!)}, max ${format(timings.at(-1)!)}, ${timings.length} loads); ` +
          `target ≤ ${TARGET_MS} ms: ${median <= TARGET_MS ? "met" : "MISSED"}`,
      );
    } finally {
      await browser.close();
    }
  } finally {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
