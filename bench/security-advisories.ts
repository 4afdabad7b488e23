// Advisory list benchmark (`node --import tsx bench/security-advisories.ts`): a seeded generator
// writes 100,000 advisories with the mix of the real Wolfi corpus (security-data §2.5: ~92 % with
// two aliases, ~73 % whose latest event is `fixed`, 1–3 events each) into a real SQLite store
// through AdvisoryStore.upsert; then, for each filter kind (none, artifact_names, aliases, query,
// latest_event_type), times one page of 50 through AdvisoriesService.listAdvisories (the service
// layer: request mapping, paging, store, response messages) and the equivalent hand-written SQL on
// the same database file (better-sqlite3 prepared statements: the page, its total, its aliases and
// events), alternating the two, and prints the medians and their ratio (target ≤ 2×).
//
// Environment: BENCH_ADVISORIES (default 100000), BENCH_RUNS (default 15), BENCH_SEED (default 1).
// The list-total cache is off (listCountTtlMs 0), so every service call counts like the SQL does.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import Database from "better-sqlite3";
import { createAdvisoriesService } from "../src/advisories/advisories-service.js";
import { advisoryEventUid, advisoryUid } from "../src/advisories/advisory-identity.js";
import type { RequestContext } from "../src/core/context.js";
import { PageTokenCodec } from "../src/core/list.js";
import {
  EventTypeFilter,
  ListAdvisoriesRequestSchema,
} from "../src/gen/platform/vulnerabilities/v2/advisories_pb.js";
import type { AdvisoryEventRow, AdvisoryEventType, AdvisoryRow } from "../src/storage/advisory-store.js";
import { openStore } from "../src/storage/sql/open-store.js";
import { seededRandom } from "../test/support/seeded-random.js";

const COUNT = Number(process.env.BENCH_ADVISORIES ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const SEED = Number(process.env.BENCH_SEED ?? 1);
const PACKAGES = 1600;
const ALPHABET = "23456789cfghjmpqrvwx";
const T0 = Date.parse("2023-01-01T00:00:00Z");
const COMPONENT_TYPES = [
  "go-module",
  "go-module",
  "go-module",
  "apk",
  "java-archive",
  "python",
  "rust-crate",
  "npm",
];

const rnd = seededRandom(SEED);
const pick = <T>(list: readonly T[]): T => list[rnd.int(0, list.length - 1)] as T;
const cga = () => {
  let s = "CGA";
  for (let g = 0; g < 3; g++) {
    s += "-";
    for (let i = 0; i < 4; i++) s += ALPHABET[rnd.int(0, ALPHABET.length - 1)];
  }
  return s;
};

/** The latest event's type, by the corpus distribution. */
function latestType(): AdvisoryEventType {
  const r = rnd.next();
  if (r < 0.73) return "fixed";
  if (r < 0.86) return "detection";
  if (r < 0.95) return "false-positive-determination";
  if (r < 0.988) return "pending-upstream-fix";
  if (r < 0.995) return "fix-not-planned";
  return "true-positive-determination";
}

function eventData(type: AdvisoryEventType, component: string): Record<string, unknown> {
  if (type === "fixed")
    return { fixedVersion: `${rnd.int(1, 9)}.${rnd.int(0, 30)}.${rnd.int(0, 9)}-r${rnd.int(0, 5)}` };
  if (type === "detection") return { scanv1: { scanner: "grype", component, componentType: "go-module" } };
  if (type === "false-positive-determination")
    return { type: "vulnerable-code-not-included-in-package", note: "" };
  return { note: "generated" };
}

function generate(i: number): AdvisoryRow {
  const pkg = `pkg-${rnd.int(0, PACKAGES - 1)}`;
  const advisoryId = cga();
  const uid = advisoryUid(advisoryId, pkg);
  const year = 2018 + rnd.int(0, 7);
  const cve = `CVE-${year}-${rnd.int(1000, 99999)}`;
  const aliases = rnd.next() < 0.92 ? [cve, `GHSA-${cga().slice(4)}`] : [cve];
  const n = rnd.next() < 0.38 ? 1 : rnd.next() < 0.92 ? 2 : 3;
  const component = `example.org/mod-${rnd.int(0, 5000)}`;
  const start = T0 + i * 60_000;
  const types: AdvisoryEventType[] = [];
  for (let k = 0; k < n - 1; k++) types.push("detection");
  types.push(latestType());
  const events: AdvisoryEventRow[] = types.map((type, k) => ({
    uid: advisoryEventUid(uid, start + k * 3_600_000, type, k),
    time: start + k * 3_600_000,
    type,
    author: "bench-import",
    reviewer: "",
    reviewState: "approved",
    issue: "",
    data: eventData(type, component),
  }));
  return {
    uid,
    advisoryId,
    legacyAdvisoryId: "",
    author: "bench-import",
    artifactName: pkg,
    artifactType: "apk",
    artifactArchitecture: "",
    componentName: component,
    componentType: pick(COMPONENT_TYPES),
    componentLocation: "",
    originPackage: pkg,
    packageNamespace: "wolfi",
    aliases,
    events,
    severities: [],
    findings: "",
    createTime: start,
    updateTime: events.at(-1)?.time ?? start,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "wharf-bench-advisories-"));
  const file = join(dir, "wharf.db");
  const store = await openStore({ sqlitePath: file, listCountTtlMs: 0 });
  try {
    const rows: AdvisoryRow[] = [];
    const loadStart = performance.now();
    for (let i = 0; i < COUNT; i += 1000) {
      const batch = Array.from({ length: Math.min(1000, COUNT - i) }, (_, k) => generate(i + k));
      rows.push(...batch.slice(0, 1));
      await store.transaction(async (tx) => {
        for (const row of batch) await tx.advisories.upsert(row);
      });
    }
    const loadSeconds = (performance.now() - loadStart) / 1000;
    console.log(
      `imported ${COUNT} advisories in ${loadSeconds.toFixed(1)} s (${Math.round(COUNT / loadSeconds)}/s)`,
    );

    const sample = rows[Math.floor(rows.length / 2)] as AdvisoryRow;
    const service = createAdvisoriesService({
      store,
      pageTokens: new PageTokenCodec(Buffer.from("bench"), { now: () => Date.now() }),
    });
    const ctx = {
      requestId: "bench",
      principal: { identityUid: "0".repeat(40), isAdmin: true, claims: {} },
      access: {
        has: async () => true,
        require: async () => {},
        scopesWith: async () => ({ all: true }) as const,
      },
      clock: { now: () => Date.now() },
      signal: new AbortController().signal,
    } satisfies RequestContext;

    const sqlite = new Database(file, { readonly: true });
    const columns =
      "uid, advisory_id, legacy_advisory_id, author, artifact_name, artifact_type, artifact_architecture, " +
      "component_name, component_type, component_location, origin_package, package_namespace, severities, " +
      "findings, create_time, update_time, delete_time";
    const aliasesOf = (uids: string[]) =>
      sqlite
        .prepare(
          `select advisory_uid, alias from advisory_aliases where advisory_uid in (${uids.map(() => "?").join(",")})`,
        )
        .all(...uids);
    const eventsOf = (uids: string[]) =>
      sqlite
        .prepare(
          `select * from advisory_events where advisory_uid in (${uids.map(() => "?").join(",")}) order by advisory_uid, position`,
        )
        .all(...uids);
    const handPage = (where: string, params: unknown[]) => {
      const page = sqlite
        .prepare(
          `select ${columns} from advisories where ${where} and delete_time is null order by uid limit 51`,
        )
        .all(...params) as { uid: string }[];
      const total = sqlite
        .prepare(`select count(*) as n from advisories where ${where} and delete_time is null`)
        .get(...params);
      const uids = page.slice(0, 50).map((r) => r.uid);
      if (uids.length > 0) {
        aliasesOf(uids);
        eventsOf(uids);
      }
      return { page, total };
    };

    const kinds: Array<{
      name: string;
      request: Parameters<typeof create<typeof ListAdvisoriesRequestSchema>>[1];
      sql: () => unknown;
    }> = [
      { name: "none", request: {}, sql: () => handPage("1 = 1", []) },
      {
        name: "artifact_names",
        request: { artifactNames: [sample.artifactName] },
        sql: () => handPage("artifact_name in (?)", [sample.artifactName]),
      },
      {
        name: "aliases",
        request: { aliases: [sample.aliases[0] as string] },
        sql: () =>
          handPage("uid in (select advisory_uid from advisory_aliases where alias in (?))", [
            sample.aliases[0],
          ]),
      },
      {
        name: "query",
        request: { query: sample.componentName },
        sql: () => handPage("search like ? escape '\\'", [`%${sample.componentName.toLowerCase()}%`]),
      },
      {
        name: "latest_event_type",
        request: { latestEventType: EventTypeFilter.PENDING_UPSTREAM_FIX },
        sql: () => handPage("latest_event_type = ?", ["pending-upstream-fix"]),
      },
    ];

    console.log(`\none page of 50, median of ${RUNS} alternating runs (ms)`);
    console.log("filter               service      SQL   ratio   rows  total");
    for (const kind of kinds) {
      const request = create(ListAdvisoriesRequestSchema, { ...kind.request, pageSize: 50 });
      const serviceTimes: number[] = [];
      const sqlTimes: number[] = [];
      let shown = 0;
      let total = "";
      for (let run = 0; run < RUNS + 1; run++) {
        const a = performance.now();
        const res = await service.listAdvisories(request, ctx);
        const b = performance.now();
        kind.sql();
        const c = performance.now();
        if (run === 0) {
          shown = res.advisories?.length ?? 0;
          total = String(res.totalCount);
          continue; // warm-up
        }
        serviceTimes.push(b - a);
        sqlTimes.push(c - b);
      }
      const s = median(serviceTimes);
      const q = median(sqlTimes);
      console.log(
        `${kind.name.padEnd(18)} ${s.toFixed(2).padStart(9)} ${q.toFixed(2).padStart(8)} ${(s / q).toFixed(2).padStart(6)}x ${String(shown).padStart(6)} ${total.padStart(6)}`,
      );
    }
    sqlite.close();
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
