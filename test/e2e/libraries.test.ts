import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import * as lib from "../../src/gen/platform/libraries/v2/artifacts_pb.js";
import { artifactUid } from "../../src/libraries/library-ids.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { forEachEngine } from "../support/databases.js";
import { grpcCall } from "../support/grpc-call.js";
import { personWithRole } from "../support/registered-person.js";
import { type CliRun, runWharf } from "../support/wharf-process.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const CATALOGUE = fileURLToPath(new URL("../fixtures/libraries/catalogue.jsonl", import.meta.url));
const BROKEN = fileURLToPath(new URL("../fixtures/libraries/broken.jsonl", import.meta.url));
const SERVICE = "/platform.libraries.v2.ArtifactsService";
const ALL = "ecosystems=ECOSYSTEM_JAVA&ecosystems=ECOSYSTEM_PYTHON&ecosystems=ECOSYSTEM_JAVASCRIPT";
const SPRING = artifactUid("JAVA", "org.springframework:spring-core");

interface ArtifactJson {
  uid: string;
  name: string;
  description: string;
  ecosystem: string;
  latestVersion: string;
  versionCount: number;
  createTime: string;
  updateTime: string;
}
interface ArtifactList {
  artifacts?: ArtifactJson[];
  nextPageToken?: string;
  totalCount: string;
  skipped?: number;
}
interface VersionList {
  artifactVersions?: Array<{
    uid: string;
    name: string;
    version: string;
    sizeBytes: string;
    remediated?: boolean;
    createTime: string;
  }>;
  nextPageToken?: string;
  totalCount: string;
}

forEachEngine("libraries: import and ArtifactsService", (db) => {
  let wharf: TestServer;
  let client: grpc.Client;
  let viewer: string;
  let puller: string;
  let storeFlags: string[];

  /**
   * `wharf import libraries ARGS…` against the server's database while it serves, in this process
   * through runCli (the parser bin/wharf.js runs; a spawned CLI costs a Node start-up each time).
   */
  const importLibraries = (...args: string[]): Promise<CliRun> =>
    runCliInProcess(["import", "libraries", ...args, ...storeFlags], process.env);
  /** The same through the shipped bin/wharf.js (built dist/), a process of its own. */
  const importLibrariesSpawned = (...args: string[]): Promise<CliRun> =>
    runWharf(["import", "libraries", ...args, ...storeFlags], process.env);
  const list = async (query: string, token = viewer) =>
    expectJson<ArtifactList>(await wharf.api(`/libraries/v2/artifacts?${query}`, { token }));
  const names = (body: ArtifactList) => (body.artifacts ?? []).map((a) => a.name);

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    wharf = await startTestServer(databaseUrl ? { databaseUrl } : {});
    storeFlags = databaseUrl ? ["--database-url", databaseUrl] : ["--data-dir", wharf.dataDir];
    client = new grpc.Client(new URL(wharf.apiUrl).host, grpc.credentials.createInsecure());
    const org = await wharf.create("/iam/v2/groups", { name: "acme" });
    viewer = (await personWithRole(wharf, "vera", org, "viewer")).token;
    puller = (await personWithRole(wharf, "pat", org, "registry.pull")).token;
  });
  after(async () => {
    client?.close();
    await wharf?.close();
  });

  it("imports the JSONL file while the server runs; a re-import changes nothing", async () => {
    // The shipped bin, from another process: the only spawned `import libraries`.
    const first = await importLibrariesSpawned(CATALOGUE);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, /wharf import libraries: created 21, updated 0, unchanged 0, rejected 0\n$/);
    const again = await importLibraries(CATALOGUE);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /wharf import libraries: created 0, updated 0, unchanged 21, rejected 0\n$/);
  });

  it("lists artifacts of the requested ecosystems by name, aggregated from their versions", async () => {
    const body = await list(ALL);
    assert.equal(body.totalCount, "9");
    assert.deepEqual(names(body), [
      "@babel/core",
      "Flask-Admin",
      "com.fasterxml.jackson.core:jackson-databind",
      "left-pad",
      "lodash",
      "org.apache.commons:commons-text",
      "org.springframework:spring-core",
      "requests",
      "torch",
    ]);
    const spring = body.artifacts?.find((a) => a.uid === SPRING);
    assert.deepEqual(spring, {
      uid: SPRING,
      name: "org.springframework:spring-core",
      description: "Spring Framework core utilities, remediated build",
      ecosystem: "ECOSYSTEM_JAVA",
      latestVersion: "6.1.5-0.cgr.1",
      versionCount: 4,
      createTime: "2024-02-15T08:00:00Z",
      updateTime: "2024-04-02T12:00:00Z",
    });
    const latest = Object.fromEntries((body.artifacts ?? []).map((a) => [a.name, a.latestVersion]));
    assert.equal(latest["com.fasterxml.jackson.core:jackson-databind"], "2.15.0-0.cgr.2");
    assert.equal(latest.lodash, "4.17.21-cgr.1");
    assert.equal(latest.torch, "2.3.0+cu121");
    assert.equal(latest.requests, "2.31.0+cgr.1");
  });

  it("filters by ecosystem, name substring (any case), remediated and CUDA version; orders and pages", async () => {
    assert.deepEqual(names(await list("ecosystems=ECOSYSTEM_PYTHON")), ["Flask-Admin", "requests", "torch"]);
    assert.deepEqual(names(await list("ecosystems=ECOSYSTEM_JAVA&query=SPRING")), [
      "org.springframework:spring-core",
    ]);
    assert.deepEqual(names(await list(`${ALL}&query=o`)), [
      "@babel/core",
      "com.fasterxml.jackson.core:jackson-databind",
      "lodash",
      "org.apache.commons:commons-text",
      "org.springframework:spring-core",
      "torch",
    ]);
    assert.deepEqual(names(await list(`${ALL}&remediated=true`)), [
      "@babel/core",
      "com.fasterxml.jackson.core:jackson-databind",
      "lodash",
      "org.springframework:spring-core",
      "requests",
    ]);
    assert.deepEqual(names(await list("ecosystems=ECOSYSTEM_PYTHON&cudaVersion=12.1")), ["torch"]);
    assert.deepEqual(names(await list("ecosystems=ECOSYSTEM_PYTHON&cudaVersion=cu118")), ["torch"]);
    assert.deepEqual(names(await list("ecosystems=ECOSYSTEM_PYTHON&cudaVersion=12.4")), []);
    assert.deepEqual(names(await list("ecosystems=ECOSYSTEM_JAVASCRIPT&order_by=update_time desc")), [
      "lodash",
      "@babel/core",
      "left-pad",
    ]);

    const seen: string[] = [];
    let token = "";
    for (let page = 0; page < 10; page++) {
      const body = await list(`${ALL}&orderBy=name%20desc&pageSize=4${token ? `&pageToken=${token}` : ""}`);
      assert.equal(body.totalCount, "9");
      seen.push(...names(body));
      token = body.nextPageToken ?? "";
      if (!token) break;
    }
    assert.deepEqual(seen, names(await list(ALL)).reverse(), "three pages, nothing repeated or skipped");
    const skipped = await list(`${ALL}&skip=7&pageSize=5`);
    assert.deepEqual(names(skipped), ["requests", "torch"]);
    assert.equal(skipped.skipped, 7);
  });

  it("lists an artifact's versions newest first in the ecosystem's order, paged", async () => {
    const body = await expectJson<VersionList>(
      await wharf.api(`/libraries/v2/artifacts/${SPRING}/versions`, { token: viewer }),
    );
    assert.equal(body.totalCount, "4");
    assert.deepEqual(
      body.artifactVersions?.map((v) => v.version),
      ["6.1.5-0.cgr.1", "6.1.5", "6.1.4", "5.3.33"],
    );
    const remediated = body.artifactVersions?.[0];
    assert.equal(remediated?.name, "org.springframework:spring-core");
    assert.equal(remediated?.sizeBytes, "1895230");
    assert.equal(remediated?.remediated, true);
    assert.equal(remediated?.createTime, "2024-04-02T12:00:00Z");
    assert.ok(remediated?.uid.startsWith(`${SPRING}/`));

    const torch = artifactUid("PYTHON", "torch");
    const first = await expectJson<VersionList>(
      await wharf.api(`/libraries/v2/artifacts/${torch}/versions?pageSize=2`, { token: viewer }),
    );
    assert.deepEqual(
      first.artifactVersions?.map((v) => v.version),
      ["2.3.0+cu121", "2.3.0+cu118"],
    );
    const second = await expectJson<VersionList>(
      await wharf.api(
        `/libraries/v2/artifacts/${torch}/versions?pageSize=2&pageToken=${first.nextPageToken}`,
        {
          token: viewer,
        },
      ),
    );
    assert.deepEqual(
      second.artifactVersions?.map((v) => v.version),
      ["2.3.0"],
    );
    assert.equal(second.nextPageToken ?? "", "");
    const byPublish = await expectJson<VersionList>(
      await wharf.api(`/libraries/v2/artifacts/${torch}/versions?orderBy=create_time`, { token: viewer }),
    );
    assert.deepEqual(
      byPublish.artifactVersions?.map((v) => v.version),
      ["2.3.0", "2.3.0+cu118", "2.3.0+cu121"],
    );
    await expectError(
      await wharf.api(`/libraries/v2/artifacts/${"0".repeat(40)}/versions`, { token: viewer }),
      { status: 404, code: 5 },
    );
    await expectError(await wharf.api("/libraries/v2/artifacts/not-a-uid/versions", { token: viewer }), {
      status: 400,
      code: 3,
      field: "artifact_id",
    });
  });

  it("counts artifacts per ecosystem", async () => {
    const counts = await expectJson<{ counts: Array<{ ecosystem: string; totalCount: string }> }>(
      await wharf.api("/libraries/v2/artifacts/count?ecosystems=ECOSYSTEM_PYTHON&ecosystems=ECOSYSTEM_JAVA", {
        token: viewer,
      }),
    );
    assert.deepEqual(counts.counts, [
      { ecosystem: "ECOSYSTEM_JAVA", totalCount: "3" },
      { ecosystem: "ECOSYSTEM_PYTHON", totalCount: "3" },
    ]);
    const every = await expectJson<{ counts: Array<{ ecosystem: string; totalCount: string }> }>(
      await wharf.api("/libraries/v2/artifacts/count", { token: viewer }),
    );
    assert.deepEqual(
      every.counts.map((c) => [c.ecosystem, c.totalCount]),
      [
        ["ECOSYSTEM_JAVA", "3"],
        ["ECOSYSTEM_PYTHON", "3"],
        ["ECOSYSTEM_JAVASCRIPT", "3"],
      ],
    );
  });

  it("refuses bad requests with field violations", async () => {
    const missing = await expectError(await wharf.api("/libraries/v2/artifacts", { token: viewer }), {
      status: 400,
      code: 3,
      field: "ecosystems",
    });
    assert.match(missing.message, /ecosystems/);
    await expectError(
      await wharf.api("/libraries/v2/artifacts?ecosystems=ECOSYSTEM_UNSPECIFIED", { token: viewer }),
      {
        status: 400,
        code: 3,
        field: "ecosystems",
      },
    );
    await expectError(
      await wharf.api("/libraries/v2/artifacts?ecosystems=ECOSYSTEM_PYTHON&cudaVersion=twelve", {
        token: viewer,
      }),
      {
        status: 400,
        code: 3,
        field: "cuda_version",
      },
    );
    await expectError(
      await wharf.api("/libraries/v2/artifacts?ecosystems=ECOSYSTEM_PYTHON&orderBy=version", {
        token: viewer,
      }),
      {
        status: 400,
        code: 3,
        field: "order_by",
      },
    );
  });

  it("needs a token, and libraries.artifacts.list at some group: a viewer reads, registry.pull does not", async () => {
    for (const path of [
      `/libraries/v2/artifacts?${ALL}`,
      `/libraries/v2/artifacts/${SPRING}/versions`,
      "/libraries/v2/artifacts/count",
    ]) {
      await expectError(await wharf.api(path), { status: 401, code: 16 });
      await expectError(await wharf.api(path, { token: puller }), { status: 403, code: 7 });
      assert.equal((await wharf.api(path, { token: viewer })).status, 200, path);
    }
  });

  it("serves the same over gRPC", async () => {
    const listed = await grpcCall(
      client,
      `${SERVICE}/ListArtifacts`,
      { input: lib.ListArtifactsRequestSchema, output: lib.ListArtifactsResponseSchema },
      create(lib.ListArtifactsRequestSchema, {
        ecosystems: [lib.Ecosystem.JAVA],
        remediated: true,
        pageSize: 1,
      }),
      viewer,
    );
    assert.equal(listed.error, undefined, listed.error?.details);
    assert.deepEqual(
      listed.response?.artifacts.map((a) => [a.name, a.latestVersion, a.versionCount]),
      [["com.fasterxml.jackson.core:jackson-databind", "2.15.0-0.cgr.2", 3]],
    );
    assert.equal(listed.response?.totalCount, 2n);
    assert.notEqual(listed.response?.nextPageToken, "");

    const versions = await grpcCall(
      client,
      `${SERVICE}/ListArtifactVersions`,
      { input: lib.ListArtifactVersionsRequestSchema, output: lib.ListArtifactVersionsResponseSchema },
      create(lib.ListArtifactVersionsRequestSchema, { artifactId: artifactUid("JAVASCRIPT", "lodash") }),
      viewer,
    );
    assert.deepEqual(
      versions.response?.artifactVersions.map((v) => [v.version, v.sizeBytes, v.remediated]),
      [
        ["4.17.21-cgr.1", 1413802n, true],
        ["4.17.21", 1413741n, false],
        ["4.17.20", 1413000n, false],
      ],
    );

    const counted = await grpcCall(
      client,
      `${SERVICE}/CountArtifacts`,
      { input: lib.CountArtifactsRequestSchema, output: lib.CountArtifactsResponseSchema },
      create(lib.CountArtifactsRequestSchema, { ecosystems: [lib.Ecosystem.JAVASCRIPT] }),
      viewer,
    );
    assert.deepEqual(
      counted.response?.counts.map((c) => [c.ecosystem, c.totalCount]),
      [[lib.Ecosystem.JAVASCRIPT, 3n]],
    );

    const call = (request: lib.ListArtifactsRequest, token?: string) =>
      grpcCall(
        client,
        `${SERVICE}/ListArtifacts`,
        { input: lib.ListArtifactsRequestSchema, output: lib.ListArtifactsResponseSchema },
        request,
        token,
      );
    const java = create(lib.ListArtifactsRequestSchema, { ecosystems: [lib.Ecosystem.JAVA] });
    assert.equal(
      (await call(create(lib.ListArtifactsRequestSchema, {}), viewer)).error?.code,
      grpc.status.INVALID_ARGUMENT,
    );
    assert.equal((await call(java)).error?.code, grpc.status.UNAUTHENTICATED);
    assert.equal((await call(java, puller)).error?.code, grpc.status.PERMISSION_DENIED);
  });

  it("reports bad lines by file, line and field; --strict rolls the whole file back", async () => {
    const strict = await importLibraries("--strict", BROKEN);
    assert.equal(strict.code, 1);
    assert.match(strict.stderr, new RegExp(`${BROKEN} line 2: ecosystem: unknown ecosystem "RUST"`));
    assert.match(strict.stderr, new RegExp(`--strict: ${BROKEN} rolled back`));
    assert.deepEqual(
      names(await list("ecosystems=ECOSYSTEM_PYTHON&query=six")),
      [],
      "nothing of the file was imported",
    );
    assert.equal((await list(ALL)).totalCount, "9");

    const lenient = await importLibraries(BROKEN);
    assert.equal(lenient.code, 0, lenient.stderr);
    const lines = lenient.stderr.trim().split("\n");
    assert.ok(
      lines.includes(
        `wharf import libraries: ${BROKEN} line 2: ecosystem: unknown ecosystem "RUST" (expected one of JAVA, PYTHON, JAVASCRIPT)`,
      ),
      lenient.stderr,
    );
    assert.ok(
      lines.some((l) => l.startsWith(`wharf import libraries: ${BROKEN} line 4: publishTime: `)),
      lenient.stderr,
    );
    assert.ok(
      lines.some((l) => l.startsWith(`wharf import libraries: ${BROKEN} line 5: not valid JSON`)),
      lenient.stderr,
    );
    assert.equal(lines.at(-1), "wharf import libraries: created 2, updated 0, unchanged 0, rejected 3");
    assert.deepEqual(names(await list("ecosystems=ECOSYSTEM_PYTHON&query=six")), ["six"]);
    assert.deepEqual(names(await list("ecosystems=ECOSYSTEM_JAVASCRIPT&query=chalk")), ["chalk"]);
  });
});

describe("wharf import: help and usage errors", () => {
  // In this process through runCli: help and usage come from the parser bin/wharf.js runs, whose
  // exit codes as a process cli-operability.test.ts checks.
  const wharf = (...args: string[]) => runCliInProcess(args, process.env);

  it("lists the kinds with the importers' options, not the server's", async () => {
    for (const args of [
      ["import", "--help"],
      ["help", "import"],
      ["import", "libraries", "-h"],
      ["help", "import", "libraries"],
    ]) {
      const out = await wharf(...args);
      assert.equal(out.code, 0, args.join(" "));
      assert.match(out.stdout, /wharf import libraries FILE… \[--strict\] \[options\]/, args.join(" "));
      assert.match(out.stdout, /--strict/);
      assert.doesNotMatch(out.stdout, /--api-addr/, "the server's options are not the importer's");
    }
    assert.match((await wharf("--help")).stdout, /wharf import libraries FILE…/, "the main usage names it");
  });

  it("an unknown kind, a missing file argument or an unknown flag exits 2 with one line", async () => {
    const unknown = await wharf("import", "widgets", "a.jsonl");
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^wharf import: unknown kind "widgets" \(known: libraries/);
    const noFile = await wharf("import", "libraries");
    assert.equal(noFile.code, 2);
    assert.equal(noFile.stderr, "wharf import libraries: name at least one FILE to import\n");
    const flag = await wharf("import", "libraries", "--bogus", "a.jsonl");
    assert.equal(flag.code, 2);
    assert.match(flag.stderr, /^wharf import libraries: unknown option '--bogus'/i);
  });

  it("a missing file exits 1 naming it", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "wharf-import-"));
    try {
      const missing = join(dataDir, "nope.jsonl");
      const out = await wharf("import", "libraries", missing, "--data-dir", dataDir);
      assert.equal(out.code, 1);
      assert.match(
        out.stderr,
        new RegExp(`wharf import libraries: ${missing}: ENOENT.*; nothing of it was imported\\n$`),
      );
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
