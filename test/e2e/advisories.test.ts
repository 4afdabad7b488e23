import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, it } from "node:test";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import * as feed from "../../src/gen/platform/advisory/v2/security_advisory_pb.js";
import * as adv from "../../src/gen/platform/vulnerabilities/v2/advisories_pb.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { forEachEngine } from "../support/databases.js";
import { grpcCall } from "../support/grpc-call.js";
import { registeredPerson } from "../support/registered-person.js";
import { type CliRun, runWharf } from "../support/wharf-process.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";
import { zipOf } from "../support/zip-writer.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/advisories/", import.meta.url));
const ADVISORIES = "/platform.vulnerabilities.v2.AdvisoriesService";
const FEED = "/platform.advisory.v2.SecurityAdvisoryService";

type Json = Record<string, unknown>;
interface AdvisoryJson extends Json {
  uid: string;
  advisoryId: string;
  artifactName: string;
  aliases?: string[];
  events?: Json[];
}

forEachEngine("advisories: CLI import, REST and gRPC", (db) => {
  let server: TestServer;
  let client: grpc.Client;
  let work: string;
  let location: string[];
  let databaseUrl: string | undefined;

  /**
   * `wharf import KIND ARGS…` into the server's store while it serves, in this process through runCli
   * (the parser bin/wharf.js runs): the importer's outcome does not depend on the process boundary,
   * and each spawned run cost a Node start-up. `spawned` runs the shipped bin/wharf.js (built dist/).
   */
  const importCli = (kind: string, ...args: string[]): Promise<CliRun> =>
    runImport(runCliInProcess, kind, args);
  const importSpawned = (kind: string, ...args: string[]): Promise<CliRun> => runImport(runWharf, kind, args);
  const runImport = (
    run: (args: string[], env: NodeJS.ProcessEnv) => Promise<CliRun>,
    kind: string,
    args: string[],
  ) =>
    run(["import", kind, ...location, ...args], {
      ...process.env,
      ...(databaseUrl ? { WHARF_DATABASE_URL: databaseUrl } : {}),
    });
  const list = async (query: string, token = server.adminToken) =>
    expectJson<{ advisories?: AdvisoryJson[]; nextPageToken?: string; totalCount?: string }>(
      await server.api(`/vulnerabilities/v2/advisories${query}`, { token }),
    );
  const listed = async (query: string) =>
    ((await list(query)).advisories ?? []).map((a) => `${a.artifactName}:${a.advisoryId}`).sort();

  before(async () => {
    databaseUrl = db.engine === "postgres" ? (await db.freshOptions()).databaseUrl : undefined;
    server = await startTestServer(databaseUrl ? { databaseUrl } : {});
    client = new grpc.Client(new URL(server.apiUrl).host, grpc.credentials.createInsecure());
    location = databaseUrl ? [] : ["--data-dir", server.dataDir];
    work = await mkdtemp(join(tmpdir(), "wharf-advisories-"));
    // The OSV set as a zip archive (an all.json index inside), the YAML files as a directory.
    const files: Record<string, string> = {};
    for (const name of await readdir(join(FIXTURES, "osv"))) {
      files[`osv/${name}`] = await readFile(join(FIXTURES, "osv", name), "utf8");
    }
    await writeFile(join(work, "osv.zip"), zipOf(files));
  });
  after(async () => {
    client?.close();
    await server?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("imports the zip, the YAML directory and the metadata; a re-import changes nothing", async () => {
    // On PostgreSQL the shipped bin imports, the only spawned `import advisories` with a database URL
    // (cli-vulns.test.ts spawns one into a SQLite data dir).
    const first = await (db.engine === "postgres" ? importSpawned : importCli)(
      "advisories",
      join(work, "osv.zip"),
      join(FIXTURES, "yaml"),
    );
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, /created 18, updated 0, unchanged 0, rejected 0\s*$/);
    const meta = await importCli("vulnmeta", join(FIXTURES, "vulnmeta"));
    assert.equal(meta.code, 0, meta.stderr);
    assert.match(meta.stderr, /created 2, updated 0, unchanged 0, rejected 0\s*$/);
    const again = await importCli("advisories", join(work, "osv.zip"), join(FIXTURES, "yaml"));
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /created 0, updated 0, unchanged 18, rejected 0\s*$/);
  });

  it("bad records are reported with file, path and field and skipped; --strict rolls the file back", async () => {
    const batch = join(FIXTURES, "malformed", "mixed-batch.json");
    const strict = await importCli("advisories", "--strict", batch);
    assert.equal(strict.code, 1);
    assert.match(
      strict.stderr,
      /mixed-batch\.json \$\[1\]\.severity\[0\]\.score: score: invalid CVSS_V3 vector/,
    );
    assert.match(strict.stderr, /--strict: .*mixed-batch\.json rolled back/);
    assert.deepEqual(await listed("?artifact_names=good-one"), [], "nothing of the strict file is stored");

    const lenient = await importCli(
      "advisories",
      batch,
      join(FIXTURES, "malformed", "bad-events.advisories.yaml"),
    );
    assert.equal(lenient.code, 0, lenient.stderr);
    assert.match(
      lenient.stderr,
      /bad-events\.advisories\.yaml advisories\[1\]\.events\[1\]\.data\.fixed-version/,
    );
    assert.match(lenient.stderr, /created 2, updated 0, unchanged 0, rejected 3\s*$/);
    assert.equal(
      (await listed("?artifact_names=good-one")).length,
      1,
      "the good record of the batch is stored",
    );

    const unknown = await importCli("advisories", join(FIXTURES, "malformed", "old-schema.advisories.yaml"));
    assert.equal(unknown.code, 1);
    assert.match(
      unknown.stderr,
      /old-schema\.advisories\.yaml: schema-version: .*schema-version must be 2\.x/,
    );
    const truncated = join(work, "truncated.json");
    await writeFile(
      truncated,
      (await readFile(join(FIXTURES, "osv", "PYSEC-2025-11.json"), "utf8")).slice(0, 90),
    );
    const cut = await importCli("advisories", truncated);
    assert.equal(cut.code, 1);
    assert.match(cut.stderr, /truncated\.json: \$: not valid JSON/);
    const usage = await importCli("advisories");
    assert.equal(usage.code, 2);
  });

  it("every ListAdvisories filter over REST", async () => {
    const all = await list("?page_size=200");
    const live = all.advisories ?? [];
    assert.equal(
      live.length,
      17,
      "16 advisories of the fixtures, less the withdrawn one, + 2 of the malformed files",
    );
    assert.equal(all.totalCount, "17");
    const cases: Array<[string, string[]]> = [
      [
        "?advisory_ids=CGA-2f3q-4c5v-8w9x",
        ["libexample-dev:CGA-2f3q-4c5v-8w9x", "libexample:CGA-2f3q-4c5v-8w9x"],
      ],
      [
        "?artifact_names=curlish&artifact_names=toolbox",
        [
          "curlish:CGA-6g7h-8j9m-2p3q",
          "curlish:CGA-7h8j-9m2p-3q4r",
          "curlish:CGA-8j9m-2p3q-4r5v",
          "toolbox:CGA-3g4h-5j6m-7p8q",
        ],
      ],
      [
        "?origin=libexample&artifact_names=curlish",
        ["libexample-dev:CGA-2f3q-4c5v-8w9x", "libexample:CGA-2f3q-4c5v-8w9x"],
      ],
      [
        "?artifact_types=os-package",
        live.filter((a) => a.artifactName === "zlibber").map((a) => `zlibber:${a.advisoryId}`),
      ],
      ["?artifact_architectures=x86_64", []],
      ["?component_names=golang.org/x/net", ["sample:CGA-4c5f-6g7h-8j9m"]],
      ["?component_types=apk", ["curlish:CGA-6g7h-8j9m-2p3q"]],
      ["?component_locations=/usr/bin/sample-tool", ["sample:CGA-4c5f-6g7h-8j9m"]],
      [
        "?aliases=CVE-2025-30003&aliases=CVE-2025-20002",
        ["curlish:CGA-8j9m-2p3q-4r5v", "sample:CGA-5f6g-7h8j-9m2p"],
      ],
      ["?event_types=EVENT_TYPE_FILTER_PENDING_UPSTREAM_FIX", ["sample:CGA-4c5f-6g7h-8j9m"]],
      ["?event_review_states=REVIEW_STATE_REJECTED", []],
      ["?event_reviewers=nobody", []],
      ["?exclude_event_authors=wharf-import", []],
      [
        "?latest_event_type=EVENT_TYPE_FILTER_FALSE_POSITIVE_DETERMINATION",
        ["curlish:CGA-7h8j-9m2p-3q4r", "sample:CGA-5f6g-7h8j-9m2p", "toolbox:CGA-3g4h-5j6m-7p8q"],
      ],
      ["?query=X/Net", ["sample:CGA-4c5f-6g7h-8j9m"]],
      [
        "?query=cve-2025-1000&artifact_types=apk",
        ["libexample-dev:CGA-2f3q-4c5v-8w9x", "libexample:CGA-2f3q-4c5v-8w9x", "toolbox:CGA-3g4h-5j6m-7p8q"],
      ],
    ];
    for (const [query, want] of cases) assert.deepEqual(await listed(query), [...want].sort(), query);
    const legacy = await list("?legacy_advisory_ids=PYSEC-2025-11");
    assert.deepEqual(
      legacy.advisories?.map((a) => a.artifactName),
      ["tarsafe-lite"],
    );
    assert.match(legacy.advisories?.[0]?.advisoryId ?? "", /^WGA-/);
    assert.equal((await list("?event_authors=wharf-import&page_size=200")).advisories?.length, 17);
    assert.equal(
      (await list("?event_review_states=REVIEW_STATE_APPROVED&page_size=200")).advisories?.length,
      17,
    );
    const uid = live[0]?.uid ?? "";
    assert.deepEqual(await listed(`?uidp.ids=${uid}`), [`${live[0]?.artifactName}:${live[0]?.advisoryId}`]);
    const withdrawn = await list("?show_deleted=true&artifact_names=example.org/router");
    assert.ok(withdrawn.advisories?.[0]?.deleteTime, "withdrawn advisories show with show_deleted");
  });

  it("pages with tokens, orders by update_time, and refuses bad paging", async () => {
    const seen: string[] = [];
    let token = "";
    do {
      const page = await list(`?page_size=7${token ? `&page_token=${encodeURIComponent(token)}` : ""}`);
      seen.push(...(page.advisories ?? []).map((a) => a.uid));
      token = page.nextPageToken ?? "";
    } while (token);
    assert.equal(seen.length, 17);
    assert.deepEqual(seen, [...seen].sort(), "uid order");
    const newest = await list("?order_by=update_time%20desc&page_size=1");
    assert.equal(newest.advisories?.[0]?.artifactName, "example.org/codec");
    await expectError(
      await server.api("/vulnerabilities/v2/advisories?order_by=name", { token: server.adminToken }),
      {
        status: 400,
        code: 3,
        field: "order_by",
      },
    );
  });

  it("Get returns the advisory with its events; unknown and malformed uids are refused", async () => {
    const [row] = (await list("?advisory_ids=CGA-4c5f-6g7h-8j9m")).advisories ?? [];
    const got = await expectJson<AdvisoryJson>(
      await server.api(`/vulnerabilities/v2/advisories/${row?.uid}`, { token: server.adminToken }),
    );
    assert.equal(got.artifactName, "sample");
    assert.deepEqual(got.aliases, ["CVE-2025-20001", "GHSA-6m7p-8q9r-cfgh"]);
    const events = got.events ?? [];
    assert.equal(events.length, 7);
    assert.deepEqual(events[0]?.detection, { manual: {} });
    assert.equal(
      (events[2]?.detection as { scanv1?: Json } | undefined)?.scanv1?.component,
      "golang.org/x/net",
    );
    assert.deepEqual(events[6]?.fixed, { fixedVersion: "1.2.3-r4" });
    assert.equal(events[6]?.reviewState, "REVIEW_STATE_APPROVED");
    assert.ok(String(events[0]?.uid).startsWith(`${row?.uid}/`));
    const [fp] = (await list("?advisory_ids=CGA-5f6g-7h8j-9m2p")).advisories ?? [];
    assert.equal(
      (fp?.events?.[0]?.falsePositiveDetermination as Json | undefined)?.type,
      "TYPE_VULNERABLE_CODE_NOT_INCLUDED_IN_PACKAGE",
    );
    const [ghsa] = (await list("?legacy_advisory_ids=GHSA-4h5j-6m7p-8q9r")).advisories ?? [];
    assert.deepEqual(ghsa?.severities, [
      { type: "TYPE_CVSS_V3", score: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", baseScore: 9.8 },
    ]);
    await expectError(
      await server.api(`/vulnerabilities/v2/advisories/${"f".repeat(40)}`, { token: server.adminToken }),
      { status: 404, code: 5 },
    );
    await expectError(
      await server.api("/vulnerabilities/v2/advisories/CGA-nope", { token: server.adminToken }),
      {
        status: 400,
        code: 3,
        field: "uid",
      },
    );
  });

  it("advisories need a token and advisories.list at some group", async () => {
    await expectError(await server.api("/vulnerabilities/v2/advisories"), { status: 401, code: 16 });
    const [row] = (await list("?page_size=1")).advisories ?? [];
    await expectError(await server.api(`/vulnerabilities/v2/advisories/${row?.uid}`), {
      status: 401,
      code: 16,
    });
    const { token } = await registeredPerson(server, "reader");
    await expectError(await server.api("/vulnerabilities/v2/advisories", { token }), {
      status: 403,
      code: 7,
    });
    await expectError(await server.api(`/vulnerabilities/v2/advisories/${row?.uid}`, { token }), {
      status: 403,
      code: 7,
    });
    // Creating an organization makes the person its owner, whose role lists advisories.
    await server.create("/iam/v2/groups", { name: "readers" }, token);
    assert.equal((await list("?page_size=200", token)).advisories?.length, 17);
  });

  it("the advisory feed needs no token: documents by origin and CVE, metadata by ids", async () => {
    const docs = await expectJson<{ documents: Array<{ id: string; advisories: Json[] }> }>(
      await server.api("/advisory/v2/documents?id=libexample"),
    );
    assert.deepEqual(
      docs.documents.map((d) => d.id),
      ["libexample"],
    );
    assert.equal(docs.documents[0]?.advisories.length, 2, "origin and subpackage");
    assert.equal(docs.documents[0]?.advisories[0]?.packageNamespace, "chainguard");
    const byCve = await expectJson<{
      documents: Array<{ id: string; advisories: Array<Json & { events: Json[] }> }>;
    }>(await server.api("/advisory/v2/documents?cves=CVE-2025-20001"));
    assert.deepEqual(
      byCve.documents.map((d) => d.id),
      ["sample"],
    );
    const events = byCve.documents[0]?.advisories[0]?.events ?? [];
    assert.equal(
      (events[2]?.detection as { scanv1?: Json } | undefined)?.scanv1?.subpackageName,
      "sample-tools",
    );
    assert.deepEqual(events[6]?.fixed, { fixedVersion: "1.2.3-r4" });
    assert.equal(events[0]?.timestamp, "2025-01-02T03:04:05Z");

    const meta = await expectJson<{ vulnerabilityMetadata: Json[]; totalCount: string }>(
      await server.api("/advisory/v2/metadata?ids=GHSA-9r2v-3w4x-hjmp&id=CVE-2025-10003"),
    );
    assert.deepEqual(
      meta.vulnerabilityMetadata.map((m) => m.id),
      ["CVE-2025-10003", "GHSA-9r2v-3w4x-hjmp"],
    );
    assert.deepEqual(meta.vulnerabilityMetadata[0]?.references, [
      { type: "TYPE_ADVISORY", url: "https://nvd.example.org/vuln/detail/CVE-2025-10003" },
      { type: "TYPE_REPORT", url: "https://bugs.example.org/4242" },
      { type: "TYPE_DISCUSSION", url: "https://lists.example.org/sec/2025/1" },
    ]);
    assert.deepEqual(meta.vulnerabilityMetadata[1]?.severities, [
      {
        type: "TYPE_CVSS_V4",
        score: "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N",
        baseScore: 9.3,
      },
    ]);
    const first = await expectJson<{
      vulnerabilityMetadata: Json[];
      nextPageToken: string;
      totalCount: string;
    }>(await server.api("/advisory/v2/metadata?page_size=2"));
    assert.equal(first.totalCount, "4");
    const second = await expectJson<{ vulnerabilityMetadata: Json[]; nextPageToken?: string }>(
      await server.api(
        `/advisory/v2/metadata?page_size=2&page_token=${encodeURIComponent(first.nextPageToken)}`,
      ),
    );
    assert.deepEqual(
      [...first.vulnerabilityMetadata, ...second.vulnerabilityMetadata].map((m) => m.id),
      ["CVE-2025-10003", "GHSA-4h5j-6m7p-8q9r", "GHSA-5j6m-7p8q-9r2v", "GHSA-9r2v-3w4x-hjmp"],
    );
    assert.equal(second.nextPageToken ?? "", "");
    const tooMany = Array.from({ length: 1001 }, (_, i) => `ids=${i}`).join("&");
    await expectError(await server.api(`/advisory/v2/metadata?${tooMany}`), {
      status: 400,
      code: 3,
      field: "ids",
    });
    await expectError(await server.api("/advisory/v2/metadata?order_by=summary"), {
      status: 400,
      code: 3,
      field: "order_by",
    });
  });

  it("ResolvedVulns checks its input and authentication; an image without reports resolved nothing", async () => {
    await expectError(
      await server.api("/advisory/v2/images/resolvedVulns:query", { method: "POST", body: {} }),
      {
        status: 401,
        code: 16,
      },
    );
    await expectError(
      await server.api("/advisory/v2/images/resolvedVulns:query", {
        method: "POST",
        body: {},
        token: server.adminToken,
      }),
      { status: 400, code: 3, field: "image_refs" },
    );
    const org = await server.create("/iam/v2/groups", { name: "images" });
    const repo = await server.create(`/registry/v2/repos/${org}`, { name: "app" });
    const quiet = await expectJson<{ resolvedVulnsReports: { date: string; resolvedVulns?: unknown[] }[] }>(
      await server.api("/advisory/v2/images/resolvedVulns:query", {
        method: "POST",
        body: {
          imageRefs: [{ repo, tags: ["latest"] }],
          startTime: "2026-01-01T00:00:00Z",
          endTime: "2026-01-03T00:00:00Z",
        },
        token: server.adminToken,
      }),
    );
    assert.deepEqual(
      quiet.resolvedVulnsReports.map((r) => [r.date, r.resolvedVulns ?? []]),
      [
        ["2026-01-01T00:00:00Z", []],
        ["2026-01-02T00:00:00Z", []],
        ["2026-01-03T00:00:00Z", []],
      ],
      "one report per day, nothing resolved",
    );
  });

  it("List, Get, documents and metadata over gRPC", async () => {
    const listedGrpc = await grpcCall(
      client,
      `${ADVISORIES}/ListAdvisories`,
      { input: adv.ListAdvisoriesRequestSchema, output: adv.ListAdvisoriesResponseSchema },
      create(adv.ListAdvisoriesRequestSchema, {
        latestEventType: adv.EventTypeFilter.FIXED,
        artifactNames: ["curlish"],
      }),
      server.adminToken,
    );
    assert.equal(listedGrpc.error, undefined, listedGrpc.error?.details);
    const [curl] = listedGrpc.response?.advisories ?? [];
    assert.equal(curl?.advisoryId, "CGA-6g7h-8j9m-2p3q");
    assert.equal(curl?.events[1]?.event.case, "fixed");
    const got = await grpcCall(
      client,
      `${ADVISORIES}/GetAdvisory`,
      { input: adv.GetAdvisoryRequestSchema, output: adv.AdvisorySchema },
      create(adv.GetAdvisoryRequestSchema, { uid: curl?.uid ?? "" }),
      server.adminToken,
    );
    assert.equal(got.response?.componentType, "apk");
    const anonymous = await grpcCall(
      client,
      `${ADVISORIES}/ListAdvisories`,
      { input: adv.ListAdvisoriesRequestSchema, output: adv.ListAdvisoriesResponseSchema },
      create(adv.ListAdvisoriesRequestSchema, {}),
    );
    assert.equal(anonymous.error?.code, grpc.status.UNAUTHENTICATED);
    const docs = await grpcCall(
      client,
      `${FEED}/ListDocuments`,
      { input: feed.ListDocumentsRequestSchema, output: feed.ListDocumentsResponseSchema },
      create(feed.ListDocumentsRequestSchema, { id: "curlish" }),
    );
    assert.deepEqual(
      docs.response?.documents[0]?.advisories.map((a) => a.id),
      ["CGA-6g7h-8j9m-2p3q", "CGA-7h8j-9m2p-3q4r", "CGA-8j9m-2p3q-4r5v"],
    );
    const meta = await grpcCall(
      client,
      `${FEED}/ListVulnerabilityMetadata`,
      {
        input: feed.ListVulnerabilityMetadataRequestSchema,
        output: feed.ListVulnerabilityMetadataResponseSchema,
      },
      create(feed.ListVulnerabilityMetadataRequestSchema, { ids: ["CVE-2025-10003"] }),
    );
    assert.deepEqual(
      meta.response?.vulnerabilityMetadata[0]?.severities.map((s) => s.baseScore),
      [7.5, 9.8],
    );
  });
});
