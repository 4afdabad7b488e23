import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import {
  EolTag_GraceStatus,
  EolTag_TagStatus,
  ListEolTagsRequestSchema,
  ListEolTagsResponseSchema,
} from "../../src/gen/platform/registry/v1/eol_tags_pb.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { onOneEngine } from "../support/databases.js";
import { grpcCall } from "../support/grpc-call.js";
import { nodeReleasesAsEndOfLife } from "../support/node-releases-eol.js";
import { personWithRole } from "../support/registered-person.js";
import { seedManifests } from "../support/seed-manifests.js";
import { runWharf } from "../support/wharf-process.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/eol/${name}`, import.meta.url));
const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`);
const DIGEST = `sha256:${"e".repeat(64)}`;

interface PackageVersionJson {
  eolDate?: string;
  exists?: boolean;
  fips?: boolean;
  lts?: boolean;
  legacyLts?: boolean;
  releaseDate?: string;
  version?: string;
  eolBroken?: boolean;
  latestVersion?: string;
  latestReleaseDate?: string;
  supportEndDate?: string;
  ltsFrom?: string;
  codename?: string;
}
interface EolTagJson {
  id: string;
  name: string;
  mainPackageName: string;
  tagStatus: string;
  mainPackageVersion: PackageVersionJson;
  graceStatus: string;
  gracePeriodExpiryDate?: string;
}
interface EolTagList {
  items?: EolTagJson[];
  nextPageToken?: string;
}
interface TagJson {
  uid: string;
  name: string;
  deprecated?: boolean;
}

onOneEngine("v1 ListEolTags, wharf import eol and v2 deprecation", (db) => {
  let wharf: TestServer;
  let client: grpc.Client;
  let storeFlags: string[];
  let now = day("2026-01-15");
  let acme: string;
  let pythonRepo: string;
  let nodeRepo: string;
  let otherPythonRepo: string;
  let rival: string;
  let workDir: string;
  const tagUids: Record<string, string> = {};

  /**
   * `wharf import eol ARGS…` against the server's database while it serves, in this process through
   * runCli (the parser bin/wharf.js runs; a spawned CLI costs a Node start-up each time).
   */
  const importEol = (...args: string[]) =>
    runCliInProcess(["import", "eol", ...args, ...storeFlags], process.env);
  /** The same through the shipped bin/wharf.js (built dist/), a process of its own. */
  const importEolSpawned = (...args: string[]) =>
    runWharf(["import", "eol", ...args, ...storeFlags], process.env);
  /** A token minted at the current test clock (tokens expire as the clock moves on). */
  const tokenOf = (uid = ADMIN_IDENTITY_UID) => wharf.tokenFor(uid);
  const eolTags = async (query = "", token?: string) =>
    expectJson<EolTagList>(
      await wharf.api(`/registry/v1/eoltags${query}`, { token: token ?? (await tokenOf()) }),
    );
  const byName = (list: EolTagList, repo: string) =>
    new Map((list.items ?? []).filter((t) => t.id.startsWith(`${repo}/`)).map((t) => [t.name, t]));
  const putTag = async (repo: string, name: string, deprecated = false) => {
    const res = await wharf.api(`/registry/v2/tags/${repo}`, {
      method: "POST",
      token: await tokenOf(),
      body: { name, digest: DIGEST, deprecated },
    });
    tagUids[`${repo}:${name}`] = (await expectJson<TagJson>(res)).uid;
  };

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    wharf = await startTestServer({ ...(databaseUrl ? { databaseUrl } : {}), clock: { now: () => now } });
    storeFlags = databaseUrl ? ["--database-url", databaseUrl] : ["--data-dir", wharf.dataDir];
    client = new grpc.Client(new URL(wharf.apiUrl).host, grpc.credentials.createInsecure());
    workDir = await mkdtemp(join(tmpdir(), "wharf-eol-"));

    const admin = await tokenOf();
    acme = await wharf.create("/iam/v2/groups", { name: "acme" }, admin);
    const other = await wharf.create("/iam/v2/groups", { name: "other" }, admin);
    pythonRepo = await wharf.create(`/registry/v2/repos/${acme}`, { name: "python" }, admin);
    nodeRepo = await wharf.create(`/registry/v2/repos/${acme}`, { name: "node-fips" }, admin);
    otherPythonRepo = await wharf.create(`/registry/v2/repos/${other}`, { name: "python" }, admin);
    for (const repo of [pythonRepo, nodeRepo, otherPythonRepo])
      await seedManifests(wharf.store, repo, [DIGEST]);
    for (const name of [
      "3.10",
      "3.10.4-slim",
      "3.1",
      "3.12",
      "3.12-20250101",
      "3.12-r3",
      "2.7",
      "latest",
      "3.9",
    ]) {
      await putTag(pythonRepo, name);
    }
    await putTag(pythonRepo, "old-manual", true);
    for (const name of ["18", "20-slim", "22.1.0", "latest"]) await putTag(nodeRepo, name);
    await putTag(otherPythonRepo, "3.10");
    // Only the uid is kept: tokens are minted per clock step.
    rival = (await personWithRole(wharf, "rita", other, "owner")).uid;
  });
  after(async () => {
    client?.close();
    await wharf?.close();
    await rm(workDir, { recursive: true, force: true });
  });

  describe("wharf import eol", () => {
    it("imports a legacy file with repeated --match; the v1 shape of the same data changes nothing", async () => {
      const rules = ["acme/python:3.*", "acme/python:2.*", "acme/python:old-*"].flatMap((m) => [
        "--match",
        m,
      ]);
      const expected: Array<[string, RegExp]> = [
        ["python-legacy.json", /wharf import eol: created 7, updated 0, unchanged 0, rejected 0\n$/],
        ["python-v1.json", /wharf import eol: created 0, updated 0, unchanged 7, rejected 0\n$/],
      ];
      for (const [file, summary] of expected) {
        // The first through the shipped bin: the only spawned `import eol`.
        const out = await (file === "python-legacy.json" ? importEolSpawned : importEol)(
          "--product",
          "python",
          ...rules,
          fixture(file),
        );
        assert.equal(out.code, 0, out.stderr);
        assert.match(out.stderr, summary);
      }
    });

    it("imports the real Node.js schedule of node-releases", async () => {
      const file = join(workDir, "nodejs.json");
      const cycles = nodeReleasesAsEndOfLife();
      await writeFile(file, JSON.stringify(cycles));
      const out = await importEol("--product", "nodejs", "--match", "acme/node-fips:*", file);
      assert.equal(out.code, 0, out.stderr);
      assert.match(
        out.stderr,
        new RegExp(`created ${cycles.length + 1}, updated 0, unchanged 0, rejected 0\\n$`),
      );
    });

    it("reports bad releases by file, index and field and skips them; --strict stores nothing", async () => {
      const bad = fixture("bad-records.json");
      const strict = await importEol(
        "--product",
        "strictprod",
        "--match",
        "acme/python:9.*",
        "--strict",
        bad,
      );
      assert.equal(strict.code, 1);
      assert.match(strict.stderr, /bad-records\.json \[1\]: cycle: required/);
      assert.match(strict.stderr, /--strict: .*rolled back/);
      assert.deepEqual(await wharf.store.eol.cycles(["strictprod"]), []);
      assert.deepEqual(
        (await wharf.store.eol.rulesOf(acme)).filter((r) => r.product === "strictprod"),
        [],
      );

      const lenient = await importEol("--product", "lenient", "--match", "acme/python:9.*", bad);
      assert.equal(lenient.code, 0, lenient.stderr);
      assert.match(lenient.stderr, /bad-records\.json \[2\]: eol: "2024-02-30" is not a date YYYY-MM-DD/);
      assert.match(lenient.stderr, /bad-records\.json \[4\]: a release must be a JSON object/);
      assert.match(lenient.stderr, /created 3, updated 0, unchanged 0, rejected 6\n$/);
    });

    it("refuses bad arguments (exit 2) and unknown organizations or files (exit 1, nothing stored)", async () => {
      const file = fixture("python-legacy.json");
      const cases: Array<[string[], number, RegExp]> = [
        [["--match", "acme/python:*", file], 2, /--product NAME is required/],
        [
          ["--product", "Python!", "--match", "acme/python", file],
          2,
          /must be an endoflife\.date product name/,
        ],
        [["--product", "p", file], 2, /--match ORG\/REPO:TAGGLOB is required/],
        [["--product", "p", "--match", "python:*", file], 2, /must be ORG\/REPO:TAGGLOB/],
        [["--product", "p", "--match", "acme/python:3.[0-9]", file], 2, /may hold only letters/],
        [["--product", "p", "--match", "acme/python", file, file], 2, /exactly one FILE/],
        [["--product", "p", "--match", "nobody/python", file], 1, /no organization or folder "nobody"/],
        [
          ["--product", "p", "--match", "acme/python", join(workDir, "missing.json")],
          1,
          /nothing of it was imported/,
        ],
        [["--product", "p", "--match", "acme/python", fixture("README.md")], 1, /not JSON/],
      ];
      for (const [args, code, message] of cases) {
        const out = await importEol(...args);
        assert.equal(out.code, code, `${args.join(" ")}: ${out.stderr}`);
        assert.match(out.stderr, message);
      }
      assert.deepEqual(await wharf.store.eol.cycles(["p"]), []);
    });
  });

  describe("ListEolTags", () => {
    it("answers every field of an EolTag, field by field (3.10, eligible for grace; zero values omitted)", async () => {
      now = day("2026-01-15");
      const res = await wharf.api(`/registry/v1/eoltags?name=3.10`, { token: await tokenOf() });
      assert.equal(res.headers.get("deprecation"), null);
      assert.equal(res.headers.get("sunset"), null);
      const body = await expectJson<EolTagList>(res);
      assert.deepEqual(body, {
        items: [
          {
            id: tagUids[`${pythonRepo}:3.10`],
            name: "3.10",
            mainPackageName: "python",
            tagStatus: "TAG_ACTIVE",
            mainPackageVersion: {
              eolDate: "2026-10-31T00:00:00Z",
              exists: true,
              releaseDate: "2021-10-04T00:00:00Z",
              version: "3.10",
              latestVersion: "3.10.16",
              latestReleaseDate: "2024-12-03T00:00:00Z",
              supportEndDate: "2023-04-05T00:00:00Z",
            },
            graceStatus: "GRACE_ELIGIBLE",
            gracePeriodExpiryDate: "2027-04-30T00:00:00Z",
          },
        ],
      });
    });

    it("moves a tag through the three windows as the clock passes its EOL date and grace period", async () => {
      const statusOf3_10 = async () => {
        const item = byName(await eolTags("?name=3.10.4-slim"), pythonRepo).get("3.10.4-slim");
        return [item?.tagStatus, item?.graceStatus];
      };
      now = day("2026-10-31") - 1;
      assert.deepEqual(await statusOf3_10(), ["TAG_ACTIVE", "GRACE_ELIGIBLE"]);
      now = day("2026-10-31");
      assert.deepEqual(await statusOf3_10(), ["TAG_IN_GRACE", "GRACE_ACTIVE"]);
      now = day("2027-04-30") - 1;
      assert.deepEqual(await statusOf3_10(), ["TAG_IN_GRACE", "GRACE_ACTIVE"]);
      now = day("2027-04-30");
      assert.deepEqual(await statusOf3_10(), ["TAG_INACTIVE", "GRACE_EXPIRED"]);
      now = day("2026-01-15");
    });

    it("matches tags to the longest cycle at a non-digit boundary; unmatched cycles exist: false; EOL without a date is broken", async () => {
      const python = byName(await eolTags(), pythonRepo);
      assert.deepEqual([...python.keys()].sort(), [
        "2.7",
        "3.1",
        "3.10",
        "3.10.4-slim",
        "3.12",
        "3.12-20250101",
        "3.12-r3",
        "3.9",
        "old-manual",
      ]);
      assert.equal(python.get("3.10.4-slim")?.mainPackageVersion.version, "3.10");
      assert.equal(python.get("3.1")?.mainPackageVersion.version, "3.1");
      assert.equal(python.get("3.1")?.tagStatus, "TAG_INACTIVE");
      assert.equal(
        python.get("3.9")?.mainPackageVersion.exists ?? false,
        false,
        "python 3.9 is not in the fixture",
      );
      assert.equal(python.get("3.9")?.tagStatus, "TAG_ACTIVE");
      assert.equal(python.get("3.9")?.graceStatus, "GRACE_NOT_ELIGIBLE");
      const old = python.get("2.7");
      assert.equal(old?.tagStatus, "TAG_INACTIVE");
      assert.equal(old?.graceStatus, "GRACE_BROKEN");
      assert.equal(old?.mainPackageVersion.eolBroken, true);
      assert.equal(old?.gracePeriodExpiryDate, undefined);
    });

    it("reads real Node.js data: LTS, legacy LTS, codename and FIPS from the repo name", async () => {
      const node = byName(await eolTags(`?uidp.childrenOf=${nodeRepo}`), nodeRepo);
      assert.deepEqual([...node.keys()].sort(), ["18", "20-slim", "22.1.0", "latest"]);
      const hydrogen = node.get("18");
      assert.equal(hydrogen?.mainPackageName, "nodejs");
      assert.equal(hydrogen?.mainPackageVersion.codename, "Hydrogen");
      assert.equal(hydrogen?.mainPackageVersion.lts, true);
      assert.equal(hydrogen?.mainPackageVersion.legacyLts, true);
      assert.equal(hydrogen?.mainPackageVersion.fips, true);
      assert.equal(hydrogen?.mainPackageVersion.eolDate, "2025-04-30T00:00:00Z");
      assert.equal(hydrogen?.tagStatus, "TAG_INACTIVE", "grace ended 2025-10-30");
      assert.equal(node.get("20-slim")?.tagStatus, "TAG_ACTIVE");
      assert.equal(node.get("20-slim")?.mainPackageVersion.ltsFrom, "2023-10-24T00:00:00Z");
      assert.equal(node.get("latest")?.mainPackageVersion.exists ?? false, false);
    });

    it("pages by tag uid with pageSize and pageToken, and filters by uidp, name, excludeDates, excludeEpochs", async () => {
      const all = (await eolTags()).items ?? [];
      const seen: string[] = [];
      let token = "";
      let pages = 0;
      do {
        const page = await eolTags(`?pageSize=3${token ? `&pageToken=${encodeURIComponent(token)}` : ""}`);
        assert.ok((page.items ?? []).length <= 3);
        seen.push(...(page.items ?? []).map((t) => t.id));
        token = page.nextPageToken ?? "";
        pages += 1;
      } while (token !== "");
      assert.equal(pages, Math.ceil(all.length / 3));
      assert.deepEqual(seen, [...seen].sort(), "ordered by uid");
      assert.deepEqual(
        seen,
        all.map((t) => t.id),
      );

      const names = async (query: string) => (await eolTags(query)).items?.map((t) => t.name).sort() ?? [];
      assert.deepEqual(await names(`?uidp.childrenOf=${pythonRepo}&name=3.12`), ["3.12"]);
      assert.deepEqual(await names(`?uidp.ids=${tagUids[`${nodeRepo}:18`]}`), ["18"]);
      const noDates = await names(`?uidp.childrenOf=${pythonRepo}&excludeDates=true`);
      assert.ok(!noDates.includes("3.12-20250101") && noDates.includes("3.12-r3"));
      const noEpochs = await names(`?uidp.childrenOf=${pythonRepo}&exclude_epochs=true`);
      assert.ok(!noEpochs.includes("3.12-r3") && noEpochs.includes("3.12-20250101"));
    });

    it("refuses bad paging with structured errors", async () => {
      const token = await tokenOf();
      await expectError(await wharf.api("/registry/v1/eoltags?pageSize=-1", { token }), {
        status: 400,
        code: 3,
        field: "page_size",
      });
      await expectError(await wharf.api("/registry/v1/eoltags?pageToken=garbage", { token }), {
        status: 400,
        code: 3,
        field: "page_token",
      });
      await expectError(await wharf.api("/registry/v1/eoltags"), { status: 401, code: 16 });
    });

    it("shows another organization's owner nothing of acme, even filtered to acme's repo", async () => {
      const token = await tokenOf(rival);
      assert.deepEqual((await eolTags("", token)).items ?? [], []);
      assert.deepEqual((await eolTags(`?uidp.childrenOf=${pythonRepo}`, token)).items ?? [], []);
      // The rule names acme: the other organization's repo of the same name is not covered.
      const admin = byName(await eolTags(), otherPythonRepo);
      assert.equal(admin.size, 0);
    });

    it("answers the same over gRPC (@grpc/grpc-js)", async () => {
      const rest = (await eolTags(`?uidp.childrenOf=${nodeRepo}`)).items ?? [];
      const { response, error } = await grpcCall(
        client,
        "/platform.registry.v1.Registry/ListEolTags",
        { input: ListEolTagsRequestSchema, output: ListEolTagsResponseSchema },
        create(ListEolTagsRequestSchema, { uidp: { childrenOf: nodeRepo }, pageSize: 50n }),
        await tokenOf(),
      );
      assert.equal(error, undefined);
      assert.deepEqual(
        response?.items.map((t) => t.id),
        rest.map((t) => t.id),
      );
      const hydrogen = response?.items.find((t) => t.name === "18");
      assert.equal(hydrogen?.tagStatus, EolTag_TagStatus.TAG_INACTIVE);
      assert.equal(hydrogen?.graceStatus, EolTag_GraceStatus.GRACE_EXPIRED);
      assert.equal(hydrogen?.mainPackageVersion?.version, "18");

      const denied = await grpcCall(
        client,
        "/platform.registry.v1.Registry/ListEolTags",
        { input: ListEolTagsRequestSchema, output: ListEolTagsResponseSchema },
        create(ListEolTagsRequestSchema, {}),
      );
      assert.equal(denied.error?.code, grpc.status.UNAUTHENTICATED);
    });
  });

  it("takes the grace period from --eol-grace-months (a second server on the same database)", async () => {
    const { databaseUrl } = db.engine === "postgres" ? { databaseUrl: storeFlags[1] } : {};
    const oneMonth = await startTestServer({
      ...(databaseUrl ? { databaseUrl } : {}),
      config: { eolGraceMonths: "1", ...(databaseUrl ? {} : { dataDir: wharf.dataDir }) },
      clock: { now: () => now },
    });
    try {
      const statusAt = async (iso: string) => {
        now = day(iso);
        const res = await oneMonth.api("/registry/v1/eoltags?name=3.10", {
          token: await oneMonth.tokenFor(ADMIN_IDENTITY_UID),
        });
        const item = byName(await expectJson<EolTagList>(res), pythonRepo).get("3.10");
        return [item?.tagStatus, item?.gracePeriodExpiryDate];
      };
      // 2026-10-31 plus one month clamps to 2026-11-30.
      assert.deepEqual(await statusAt("2026-11-29"), ["TAG_IN_GRACE", "2026-11-30T00:00:00Z"]);
      assert.deepEqual(await statusAt("2026-11-30"), ["TAG_INACTIVE", "2026-11-30T00:00:00Z"]);
    } finally {
      now = day("2026-01-15");
      await oneMonth.close();
    }
  });

  describe("v2 deprecated", () => {
    const v2Tag = async (repo: string, name: string) =>
      (
        await expectJson<{ tags?: TagJson[] }>(
          await wharf.api(`/registry/v2/tags?uidp.childrenOf=${repo}&name=${name}`, {
            token: await tokenOf(),
          }),
        )
      ).tags?.[0];

    it("is true in lists and Get once the tag's cycle is past EOL, computed from the clock", async () => {
      now = day("2026-10-31") - 1;
      assert.equal((await v2Tag(pythonRepo, "3.10.4-slim"))?.deprecated ?? false, false);
      now = day("2026-10-31");
      assert.equal((await v2Tag(pythonRepo, "3.10.4-slim"))?.deprecated, true);
      const got = await expectJson<TagJson>(
        await wharf.api(`/registry/v2/tags/${tagUids[`${pythonRepo}:3.10`]}`, { token: await tokenOf() }),
      );
      assert.equal(got.deprecated, true);
      assert.equal((await v2Tag(pythonRepo, "2.7"))?.deprecated, true, "EOL without a date is past EOL");
      assert.equal((await v2Tag(pythonRepo, "3.12"))?.deprecated ?? false, false);
      assert.equal((await v2Tag(pythonRepo, "latest"))?.deprecated ?? false, false, "no rule matches latest");
      assert.equal(
        (await v2Tag(otherPythonRepo, "3.10"))?.deprecated ?? false,
        false,
        "the rule names acme only",
      );
      now = day("2026-01-15");
    });

    it("ORs the EOL state with the flag set through CreateTag", async () => {
      // old-manual: matched by a rule, no cycle fits it, but it was created deprecated.
      assert.equal((await v2Tag(pythonRepo, "old-manual"))?.deprecated, true);
      await putTag(nodeRepo, "latest", true);
      assert.equal((await v2Tag(nodeRepo, "latest"))?.deprecated, true);
    });
  });
});
