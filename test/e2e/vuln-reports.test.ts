import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import { resolvedVulnerabilities } from "../../src/vulnreports/daily-vulns.js";
import { WHARF_VULN_REPORT_ARTIFACT_TYPE } from "../../src/vulnreports/referrer-ingest.js";
import { LIST_VULN_REPORTS_LIMIT } from "../../src/vulnreports/vulnerabilities-service.js";
import { detail, expectError, expectJson } from "../support/api-assertions.js";
import { forEachEngine } from "../support/databases.js";
import { personWithRole, registeredPerson } from "../support/registered-person.js";
import { type BuiltImage, buildImage, pushImage } from "../support/registry-push.js";
import { attachReferrer } from "../support/sbom-referrer.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const FIXTURES = new URL("../fixtures/vulnreports/", import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, FIXTURES));
const DAY = 24 * 60 * 60 * 1000;
const DAY1 = Date.UTC(2026, 10, 20, 12);
const LONG_TTL = 24 * 3600;

interface ImageVulnReport {
  digest: string;
  scanner: { name: string; version?: string; dbBuildTime?: string };
  createdAt: string;
  vulnerabilities?: {
    id: string;
    aliases?: string[];
    purls?: string[];
    severity?: string;
    locations?: string[];
  }[];
  repoId: string;
  current?: boolean;
  id: string;
  vulnerabilityCount?: string;
}

interface CountRow {
  repo: string;
  tag: string;
  date: string;
  vulnCounts: { severity?: string; count?: string }[];
  sizeBytes?: string;
  cveIds?: string[];
  highCveIds?: string[];
  critCveIds?: string[];
  negligibleCveIds?: string[];
  medCveIds?: string[];
}

forEachEngine("vulnerability reports", (db) => {
  let wharf: TestServer;
  let now = DAY1;
  const clock = { now: () => now };
  let admin: string;
  let acme: string;
  let repoUid: string;
  let v1: BuiltImage;
  let v2: BuiltImage;

  function upload(repo: string, digest: string, body: Uint8Array | string, token = admin): Promise<Response> {
    return fetch(`${wharf.apiUrl}/registry/v1/vuln_reports/${repo}?digest=${digest}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body,
    });
  }

  async function list(query: string, token = admin): Promise<ImageVulnReport[]> {
    const body = await expectJson<{ items?: ImageVulnReport[] }>(
      await wharf.api(`/registry/v1/vuln_reports?${query}`, { token }),
    );
    return body.items ?? [];
  }

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    wharf = await startTestServer({ clock, ...(databaseUrl ? { databaseUrl } : {}) });
    admin = await wharf.tokenFor(ADMIN_IDENTITY_UID, LONG_TTL);
    acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    const registryToken = await wharf.registryToken(undefined, LONG_TTL);
    v1 = await pushImage(wharf, "acme/app", "latest", registryToken, buildImage("vuln-v1"));
    v2 = buildImage("vuln-v2");
    const repos = await expectJson<{ repos: { uid: string }[] }>(
      await wharf.api(`/registry/v2/repos?uidp.descendants_of=${acme}&name=app`, { token: admin }),
    );
    repoUid = repos.repos[0]?.uid as string;
    assert.ok(repoUid);
  });
  after(() => wharf.close());

  it("stores an uploaded Grype report and answers it normalised, grouped by vulnerability", async () => {
    const created = await expectJson<ImageVulnReport>(
      await upload(repoUid, v1.digest, fixture("grype.json")),
    );
    assert.equal(created.vulnerabilityCount, "4");
    assert.equal(created.vulnerabilities, undefined, "the answer is the report's summary");
    const [stored] = await list(`digest=${v1.digest}`);
    assert.equal(stored?.id, created.id);
    assert.equal(created.digest, v1.digest);
    assert.equal(created.repoId, repoUid);
    assert.deepEqual(created.scanner, {
      name: "GRYPE",
      version: "0.87.0",
      dbBuildTime: "2026-11-24T01:31:48Z",
    });
    assert.equal(created.current, true);
    assert.deepEqual(
      stored?.vulnerabilities?.map((v) => [v.id, v.severity]),
      [
        ["CGA-2x3f-7c9q-m4hw", "HIGH"],
        ["GHSA-abcd-1234-wxyz", "MEDIUM"],
        ["CVE-2026-10003", "CRITICAL"],
        ["CVE-2026-10004", "NEGLIGIBLE"],
      ],
    );
    const ghsa = stored?.vulnerabilities?.[1];
    assert.deepEqual(ghsa?.aliases, ["CVE-2026-10002"]);
    assert.deepEqual(ghsa?.purls, ["pkg:golang/example.test/proto@v0.20.0"]);
    assert.deepEqual(ghsa?.locations, ["/usr/bin/exampled"]);
  });

  it("stores Trivy and cosign attestations (predicate, statement, DSSE); GetVulnReport answers the newest", async () => {
    now += 60_000;
    await expectJson<ImageVulnReport>(await upload(repoUid, v1.digest, fixture("trivy.json")));
    const [trivy] = await list(`digest=${v1.digest}&scanner=TRIVY`);
    assert.equal(trivy?.scanner.name, "TRIVY");
    assert.equal(trivy?.vulnerabilities?.length, 3);
    for (const file of [
      "cosign-vuln-predicate.json",
      "cosign-vuln-statement.json",
      "cosign-vuln-dsse.json",
    ]) {
      now += 1000;
      const created = await expectJson<ImageVulnReport>(await upload(repoUid, v1.digest, fixture(file)));
      assert.equal(created.scanner.name, "TRIVY", file);
      const [report] = await list(`digest=${v1.digest}&scanner=TRIVY`);
      assert.equal(report?.id, created.id, file);
      assert.deepEqual(report?.vulnerabilities, trivy?.vulnerabilities, file);
    }
    const tenant = await expectJson<{
      id: string;
      scanner: { name: string };
      reportGeneration: string;
      vulnerabilityMatches: {
        vulnerability: { id: string; severity?: string };
        pkg: { name: string };
        fix: { state?: string };
      }[];
    }>(await wharf.api(`/registry/v1/repos/${repoUid}/digests/${v1.digest}/vulnreport`, { token: admin }));
    assert.equal(tenant.scanner.name, "TRIVY");
    assert.equal(tenant.reportGeneration, "4");
    assert.deepEqual(
      tenant.vulnerabilityMatches.map((m) => [
        m.vulnerability.id,
        m.vulnerability.severity,
        m.pkg.name,
        m.fix.state,
      ]),
      [
        ["CVE-2026-20001", "HIGH", "libexampletls", "FIXED"],
        ["CVE-2026-20002", "LOW", "busybox", "WONT_FIX"],
        ["GHSA-abcd-1234-wxyz", "MEDIUM", "example.test/proto", "NOT_FIXED"],
      ],
    );
  });

  it("re-uploading keeps history; lists filter by digest, repo and tag, scanner and creation time; raw answers the bytes", async () => {
    now += 3_600_000;
    await expectJson(await upload(repoUid, v1.digest, fixture("grype.json")));
    const grype = await list(`digest=${v1.digest}&scanner=GRYPE`);
    assert.deepEqual(
      grype.map((r) => r.current ?? false),
      [true, false],
    );
    assert.equal((await list(`digest=${v1.digest}`)).length, 6);
    assert.equal((await list(`repoId=${repoUid}&tag=latest`)).length, 6);
    assert.equal((await list(`repoId=${repoUid}&tag=missing`)).length, 0);
    assert.equal((await list(`repoId=${repoUid}&scanner=TRIVY`)).length, 4);
    assert.equal((await list(`digest=${v1.digest}&createdSince=${new Date(now).toISOString()}`)).length, 1);
    await expectError(await wharf.api("/registry/v1/vuln_reports?scanner=CLAIR", { token: admin }), {
      status: 400,
      code: 3,
      field: "scanner",
    });
    const oldest = grype[1] as ImageVulnReport;
    const raw = await expectJson<{ digest: string; scanner: string; createdAt: string; rawReport: string }>(
      await wharf.api(
        `/registry/v1/vuln_reports/raw?digest=${v1.digest}&scanner=GRYPE&createdAt=${oldest.createdAt}`,
        { token: admin },
      ),
    );
    assert.equal(raw.rawReport, fixture("grype.json").toString("utf8"));
    assert.equal(raw.createdAt, oldest.createdAt);
  });

  it("fails loudly past 200 reports (V1_LIST_TOO_LARGE) rather than answering a silent subset", async () => {
    const crowded = `sha256:${"c".repeat(64)}`;
    const { uid: crowdedRepo } = await expectJson<{ uid: string }>(
      await wharf.api(`/registry/v2/repos/${acme}`, {
        method: "POST",
        token: admin,
        body: { name: "crowded" },
      }),
    );
    for (let i = 0; i < LIST_VULN_REPORTS_LIMIT + 1; i++) {
      await wharf.store.vulnReports.insert(
        {
          uid: `${crowdedRepo}/${(0xc000 + i).toString(16).padStart(16, "0")}`,
          repoUid: crowdedRepo,
          digest: crowded,
          scanner: "GRYPE",
          scannerVersion: "0.87.0",
          envelope: "bare",
          rawDigest: `sha256:${(0xc000 + i).toString(16).padStart(64, "0")}`,
          rawSize: 2,
          matchCount: 0,
          createTime: DAY1 + i,
        },
        [],
      );
    }
    const refused = await expectError(
      await wharf.api(`/registry/v1/vuln_reports?digest=${crowded}`, { token: admin }),
      {
        status: 400,
        code: 9,
        reason: "V1_LIST_TOO_LARGE",
      },
    );
    assert.match(
      refused.message,
      /more than 200 reports; narrow it with digest, tag, scanner or created_since/,
    );
    const narrowed = await list(`digest=${crowded}&createdSince=${new Date(DAY1 + 1).toISOString()}`);
    assert.equal(narrowed.length, LIST_VULN_REPORTS_LIMIT, "a narrower filter answers every report it names");
  });

  it("answers 404 with ResourceInfo for a digest the repo does not hold, and 400 for bad reports, storing nothing", async () => {
    const before = (await list(`repoId=${repoUid}`)).length;
    const missing = `sha256:${"e".repeat(64)}`;
    const notFound = await expectError(await upload(repoUid, missing, fixture("grype.json")), {
      status: 404,
      code: 5,
    });
    assert.deepEqual(detail(notFound, "ResourceInfo")?.resourceName, missing);
    for (const [file, pattern] of [
      ["truncated.json", /not valid JSON/],
      ["trivy-schema1.json", /expected SchemaVersion 2/],
      ["unknown.json", /expected Grype JSON/],
    ] as const) {
      const bad = await expectError(await upload(repoUid, v1.digest, fixture(file)), {
        status: 400,
        code: 3,
        field: "raw_report",
      });
      assert.match(bad.message, pattern, file);
    }
    await expectError(await upload(repoUid, "sha256:short", fixture("grype.json")), {
      status: 400,
      code: 3,
      field: "digest",
    });
    assert.equal((await list(`repoId=${repoUid}`)).length, before, "nothing stored");
    await expectError(
      await wharf.api(`/registry/v1/repos/${repoUid}/digests/${missing}/vulnreport`, { token: admin }),
      {
        status: 404,
        code: 5,
      },
    );
  });

  it("lets an editor upload but not a viewer; another organization sees nothing", async () => {
    // The test clock is past the server's one-hour administrator token: bind with `admin` (a day's).
    const bound = { bindingToken: admin, tokenTtlSeconds: LONG_TTL };
    const viewer = (await personWithRole(wharf, "viewer", acme, "viewer", bound)).token;
    const editor = (await personWithRole(wharf, "editor", acme, "editor", bound)).token;
    await expectError(await upload(repoUid, v1.digest, fixture("grype.json"), viewer), {
      status: 403,
      code: 7,
    });
    await expectJson(await upload(repoUid, v1.digest, fixture("grype.json")));
    now += 1000;
    await expectJson(await upload(repoUid, v1.digest, fixture("grype.json"), editor));
    assert.ok((await list(`digest=${v1.digest}`, viewer)).length > 0, "a viewer reads");
    await expectError(await upload(repoUid, v1.digest, fixture("grype.json"), "not-a-token"), {
      status: 401,
      code: 16,
    });

    const outsider = (await registeredPerson(wharf, "outsider", { tokenTtlSeconds: LONG_TTL })).token;
    const globex = await wharf.create("/iam/v2/groups", { name: "globex" }, outsider);
    assert.ok(globex);
    assert.deepEqual(await list(`digest=${v1.digest}`, outsider), []);
    assert.deepEqual(await list(`repoId=${repoUid}`, outsider), []);
    await expectError(
      await wharf.api(`/registry/v1/repos/${repoUid}/digests/${v1.digest}/vulnreport`, { token: outsider }),
      { status: 403, code: 7 },
    );
    await expectError(await upload(repoUid, v1.digest, fixture("grype.json"), outsider), {
      status: 403,
      code: 7,
    });
    const [any] = await list(`digest=${v1.digest}`);
    const rawPath = `/registry/v1/vuln_reports/raw?digest=${v1.digest}&scanner=${any?.scanner.name}&createdAt=${any?.createdAt}`;
    assert.ok(
      (await expectJson<{ rawReport?: string }>(await wharf.api(rawPath, { token: admin }))).rawReport,
    );
    assert.deepEqual(
      await expectJson(await wharf.api(rawPath, { token: outsider })),
      {},
      "an empty v1 answer",
    );
    const counts = await expectJson<{ items?: unknown[] }>(
      await wharf.api(
        `/registry/v1/vuln_reports/counts?repo=${repoUid}&tag=latest&from=2026-11-20T00:00:00Z&to=2026-11-20T00:00:00Z`,
        { token: outsider },
      ),
    );
    assert.deepEqual(counts.items ?? [], []);
  });

  it("picks up reports pushed as referrers of the image: raw Grype JSON and a cosign DSSE attestation", async () => {
    now = DAY1 + DAY;
    // Tokens minted on day 1 expire with it.
    admin = await wharf.tokenFor(ADMIN_IDENTITY_UID, LONG_TTL);
    const token = await wharf.registryToken(undefined, LONG_TTL);
    await pushImage(wharf, "acme/app", "latest", token, v2);
    const referrer = (
      artifactType: string,
      layerType: string,
      layer: Buffer,
      annotations?: Record<string, string>,
    ) =>
      attachReferrer(wharf, "acme/app", token, v2.digest, layer, {
        artifactType,
        layerMediaType: layerType,
        subjectSize: v2.manifest.length,
        ...(annotations ? { layerAnnotations: annotations } : {}),
      });
    // The report is stored after the push is answered: wait for it.
    const reportsWithin = async (count: number) => {
      let found: ImageVulnReport[] = [];
      for (let i = 0; i < 100 && found.length < count; i++) {
        found = await list(`digest=${v2.digest}`);
        if (found.length < count) await new Promise((r) => setTimeout(r, 50));
      }
      return found;
    };
    await referrer(WHARF_VULN_REPORT_ARTIFACT_TYPE, WHARF_VULN_REPORT_ARTIFACT_TYPE, fixture("grype.json"));
    assert.equal((await reportsWithin(1)).length, 1);
    now += 1000;
    await referrer(
      "application/vnd.dsse.envelope.v1+json",
      "application/vnd.dsse.envelope.v1+json",
      fixture("cosign-vuln-dsse.json"),
      { predicateType: "https://cosign.sigstore.dev/attestation/vuln/v1" },
    );
    const reports = await reportsWithin(2);
    // A broken report as a referrer: the push succeeds, nothing is stored, the log says why.
    await referrer(
      WHARF_VULN_REPORT_ARTIFACT_TYPE,
      WHARF_VULN_REPORT_ARTIFACT_TYPE,
      fixture("truncated.json"),
    );
    assert.deepEqual(reports.map((r) => r.scanner.name).sort(), ["GRYPE", "TRIVY"]);
    for (
      let i = 0;
      i < 100 && !wharf.logLines.some((l) => l.event === "vuln-report-referrer" && l.stored === false);
      i++
    ) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const failure = wharf.logLines.find((l) => l.event === "vuln-report-referrer" && l.stored === false);
    assert.match(String(failure?.reason), /not valid JSON/);
    assert.equal((await list(`digest=${v2.digest}`)).length, 2);
  });

  it("counts vulnerabilities per day from the tag history, cumulatively, and derives resolved ones", async () => {
    // Day 1: latest → v1 (newest report: the editor's Grype upload). Day 2 and 3: latest → v2
    // (newest report: the DSSE Trivy attestation, pushed after the raw Grype referrer).
    const query = "repo=app&tag=latest&from=2026-11-20T00:00:00Z&to=2026-11-22T23:59:59Z";
    const daily = await expectJson<{ items: CountRow[] }>(
      await wharf.api(`/registry/v1/vuln_reports/counts?${query}`, { token: admin }),
    );
    assert.deepEqual(
      daily.items.map((r) => [r.date, r.cveIds]),
      [
        [
          "2026-11-20T00:00:00Z",
          ["CGA-2x3f-7c9q-m4hw", "CVE-2026-10003", "CVE-2026-10004", "GHSA-abcd-1234-wxyz"],
        ],
        ["2026-11-21T00:00:00Z", ["CVE-2026-20001", "CVE-2026-20002", "GHSA-abcd-1234-wxyz"]],
        ["2026-11-22T00:00:00Z", ["CVE-2026-20001", "CVE-2026-20002", "GHSA-abcd-1234-wxyz"]],
      ],
    );
    const first = daily.items[0] as CountRow;
    assert.equal(first.repo, "app");
    assert.deepEqual(first.highCveIds, ["CGA-2x3f-7c9q-m4hw"]);
    assert.deepEqual(first.critCveIds, ["CVE-2026-10003"]);
    assert.deepEqual(first.negligibleCveIds, ["CVE-2026-10004"]);
    assert.deepEqual(first.medCveIds, ["GHSA-abcd-1234-wxyz"]);
    assert.ok(Number(first.sizeBytes) > 0, "the image size");
    assert.deepEqual(
      first.vulnCounts.map((c) => [c.severity ?? "UNKNOWN", Number(c.count ?? 0)]),
      [
        ["UNKNOWN", 0],
        ["NEGLIGIBLE", 1],
        ["LOW", 0],
        ["MEDIUM", 1],
        ["HIGH", 1],
        ["CRITICAL", 1],
      ],
    );
    // `references` (one series per repo and tag) over Connect, where a list of messages fits.
    const byReference = await expectJson<{ items: CountRow[] }>(
      await fetch(`${wharf.apiUrl}/platform.registry.v1.Vulnerabilities/ListVulnCountReports`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${admin}`,
          "content-type": "application/json",
          "connect-protocol-version": "1",
        },
        body: JSON.stringify({
          repo: "ignored-when-references-are-given",
          references: [
            { repo: repoUid, tag: "latest" },
            { repo: "app", tag: "missing" },
          ],
          from: "2026-11-21T00:00:00Z",
          to: "2026-11-21T00:00:00Z",
        }),
      }),
    );
    assert.deepEqual(
      byReference.items.map((r) => [r.repo, r.tag, r.date, r.cveIds?.length]),
      [["app", "latest", "2026-11-21T00:00:00Z", 3]],
      "a tag that never existed has no rows",
    );
    const cumulative = await expectJson<{ items: CountRow[] }>(
      await wharf.api(`/registry/v1/vuln_reports/counts_cumulative?${query}`, { token: admin }),
    );
    assert.deepEqual(
      cumulative.items.map((r) => r.cveIds?.length),
      [4, 6, 6],
    );
    // Without a range: the last 30 days, ending today by the server's clock (2026-11-21 here).
    const dates = async (range: string) =>
      (
        await expectJson<{ items: CountRow[] }>(
          await wharf.api(`/registry/v1/vuln_reports/counts?repo=app&tag=latest${range}`, { token: admin }),
        )
      ).items.map((r) => r.date);
    assert.deepEqual(await dates(""), ["2026-11-20T00:00:00Z", "2026-11-21T00:00:00Z"]);
    assert.deepEqual(
      await dates("&from=2026-11-21T00:00:00Z"),
      ["2026-11-21T00:00:00Z"],
      "from alone: until today",
    );
    // `to` alone: the 30 days ending then, so 2026-12-20 starts at 2026-11-21 and 2026-12-19 at 2026-11-20.
    const endingDec20 = await dates("&to=2026-12-20T00:00:00Z");
    assert.equal(endingDec20.length, 30);
    assert.equal(endingDec20[0], "2026-11-21T00:00:00Z");
    assert.equal(endingDec20.at(-1), "2026-12-20T00:00:00Z");
    assert.equal((await dates("&to=2026-12-19T00:00:00Z"))[0], "2026-11-20T00:00:00Z");
    await expectError(
      await wharf.api(
        "/registry/v1/vuln_reports/counts?repo=app&tag=latest&from=2026-11-22T00:00:00Z&to=2026-11-20T00:00:00Z",
        {
          token: admin,
        },
      ),
      { status: 400, code: 3, field: "to" },
    );

    const resolved = await resolvedVulnerabilities(wharf.store, {
      repoUid,
      tagNames: ["latest"],
      fromDay: Date.UTC(2026, 10, 20),
      toDay: Date.UTC(2026, 10, 22),
    });
    assert.deepEqual(
      resolved.map((d) => [new Date(d.day).toISOString(), d.resolved.map((v) => v.id).sort()]),
      [["2026-11-21T00:00:00.000Z", ["CGA-2x3f-7c9q-m4hw", "CVE-2026-10003", "CVE-2026-10004"]]],
    );
    const cga = resolved[0]?.resolved.find((v) => v.id === "CGA-2x3f-7c9q-m4hw");
    assert.deepEqual(cga, { id: "CGA-2x3f-7c9q-m4hw", aliases: ["CVE-2026-10001"], severity: "HIGH" });

    // The advisory feed's ResolvedVulns over the same data: a vulnerability an imported advisory
    // names by alias is reported by the advisory's id, with its severities; one with imported
    // metadata gets the metadata's; the others keep the report's id and have none.
    const severity = {
      type: "CVSS_V3",
      vector: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H",
      baseScore: 9.8,
      level: "critical",
    };
    await wharf.store.advisories.upsert({
      uid: "a".repeat(40),
      advisoryId: "CGA-9f2c-4h7m-q3rv",
      legacyAdvisoryId: "",
      author: "test",
      artifactName: "openssl",
      artifactType: "apk",
      artifactArchitecture: "",
      componentName: "",
      componentType: "",
      componentLocation: "",
      originPackage: "openssl",
      packageNamespace: "wolfi",
      aliases: ["CVE-2026-10003"],
      events: [],
      severities: [severity],
      findings: "",
      createTime: now,
      updateTime: now,
    });
    const metadataSeverity = {
      ...severity,
      baseScore: 5.3,
      level: "medium",
      vector: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:N/A:N",
    };
    await wharf.store.advisories.upsertMetadata({
      id: "CVE-2026-10004",
      summary: "",
      details: "",
      references: [],
      severities: [metadataSeverity],
      updateTime: now,
    });
    const feed = await expectJson<{
      resolvedVulnsReports: {
        date: string;
        resolvedVulns?: { id: string; aliases?: string[]; cvssSeverities?: { score?: string }[] }[];
      }[];
    }>(
      await wharf.api("/advisory/v2/images/resolvedVulns:query", {
        method: "POST",
        token: admin,
        body: {
          imageRefs: [{ repo: repoUid, tags: ["latest"] }],
          startTime: "2026-11-20T00:00:00Z",
          endTime: "2026-11-22T00:00:00Z",
        },
      }),
    );
    assert.deepEqual(
      feed.resolvedVulnsReports.map((r) => [
        r.date,
        (r.resolvedVulns ?? [])
          .map((v) => [v.id, (v.aliases ?? []).join(","), (v.cvssSeverities ?? []).length])
          .sort(),
      ]),
      [
        ["2026-11-20T00:00:00Z", []],
        [
          "2026-11-21T00:00:00Z",
          [
            ["CGA-2x3f-7c9q-m4hw", "CVE-2026-10001", 0],
            ["CGA-9f2c-4h7m-q3rv", "CVE-2026-10003", 1],
            ["CVE-2026-10004", "", 1],
          ],
        ],
        ["2026-11-22T00:00:00Z", []],
      ],
    );
    // Another organization's owner may not ask about this repo.
    const otherOwner = (await registeredPerson(wharf, "initech-owner", { tokenTtlSeconds: LONG_TTL })).token;
    assert.ok(await wharf.create("/iam/v2/groups", { name: "initech" }, otherOwner));
    await expectError(
      await wharf.api("/advisory/v2/images/resolvedVulns:query", {
        method: "POST",
        token: otherOwner,
        body: { imageRefs: [{ repo: repoUid }] },
      }),
      { status: 403, code: 7 },
    );
  });
});

describe("vulnerability reports: upload size limit", () => {
  it("refuses a report over --vuln-report-max-mb, declared or streamed, and stores nothing", async () => {
    const wharf = await startTestServer({ config: { vulnReportMaxMb: "1" } });
    try {
      await wharf.create("/iam/v2/groups", { name: "small" });
      const image = await pushImage(
        wharf,
        "small/app",
        "latest",
        await wharf.registryToken(),
        buildImage("small"),
      );
      const repos = await expectJson<{ repos: { uid: string }[] }>(
        await wharf.api("/registry/v2/repos?name=app", { token: wharf.adminToken }),
      );
      const repo = repos.repos[0]?.uid as string;
      const body = JSON.stringify({
        matches: [],
        descriptor: { name: "grype", padding: "x".repeat(2 * 1024 * 1024) },
      });
      const url = `${wharf.apiUrl}/registry/v1/vuln_reports/${repo}?digest=${image.digest}`;
      const declared = await fetch(url, {
        method: "POST",
        headers: { authorization: `Bearer ${wharf.adminToken}` },
        body,
      });
      await expectError(declared, { status: 400, code: 3, field: "raw_report" });
      const streamed = await fetch(url, {
        method: "POST",
        headers: { authorization: `Bearer ${wharf.adminToken}` },
        body: new Blob([body]).stream(),
        duplex: "half",
      } as RequestInit);
      await expectError(streamed, { status: 429, code: 8 });
      const listed = await expectJson<{ items?: unknown[] }>(
        await wharf.api(`/registry/v1/vuln_reports?digest=${image.digest}`, { token: wharf.adminToken }),
      );
      assert.deepEqual(listed.items ?? [], []);
    } finally {
      await wharf.close();
    }
  });

  it("is far above the API's 4 MiB message limit", async () => {
    const wharf = await startTestServer();
    try {
      await wharf.create("/iam/v2/groups", { name: "big" });
      const token = await wharf.registryToken();
      const image = await pushImage(wharf, "big/app", "latest", token, buildImage("big"));
      const repos = await expectJson<{ repos: { uid: string }[] }>(
        await wharf.api("/registry/v2/repos?name=app", { token: wharf.adminToken }),
      );
      const repo = repos.repos[0]?.uid as string;
      const match = JSON.parse(fixture("grype.json").toString("utf8")).matches[2];
      const matches = Array.from({ length: 3000 }, (_, i) => ({
        ...match,
        vulnerability: {
          ...match.vulnerability,
          id: `CVE-2026-${100000 + i}`,
          description: "x".repeat(1500),
        },
      }));
      const body = JSON.stringify({ matches, descriptor: { name: "grype", version: "0.87.0" } });
      assert.ok(body.length > 5 * 1024 * 1024);
      const res = await fetch(`${wharf.apiUrl}/registry/v1/vuln_reports/${repo}?digest=${image.digest}`, {
        method: "POST",
        headers: { authorization: `Bearer ${wharf.adminToken}` },
        body,
      });
      const created = await expectJson<ImageVulnReport>(res);
      assert.equal(created.vulnerabilityCount, "3000");
    } finally {
      await wharf.close();
    }
  });
});
