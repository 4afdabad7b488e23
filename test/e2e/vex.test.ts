import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, it } from "node:test";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import { OPENVEX_MEDIA_TYPE } from "../../src/vulnreports/vex/openvex.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import { forEachEngine } from "../support/databases.js";
import { personWithRole } from "../support/registered-person.js";
import { type BuiltImage, buildImage, pushImage, putManifest } from "../support/registry-push.js";
import { attachReferrer } from "../support/sbom-referrer.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const GRYPE = readFileSync(new URL("../fixtures/vulnreports/grype.json", import.meta.url));
const FIXTURE_IMAGE = `sha256:${"a".repeat(64)}`;
/** A fixture VEX document about `digest` (the fixtures name sha256:aaaa…). */
const vexFor = (name: string, digest: string) =>
  readFileSync(new URL(`../fixtures/vex/${name}`, import.meta.url), "utf8").replaceAll(
    FIXTURE_IMAGE.slice("sha256:".length),
    digest.slice("sha256:".length),
  );
/** The Grype fixture without its CRITICAL CVE-2026-10003 match. */
const GRYPE_WITHOUT_CRITICAL = (() => {
  const doc = JSON.parse(GRYPE.toString("utf8")) as { matches: { vulnerability: { id: string } }[] };
  doc.matches = doc.matches.filter((m) => m.vulnerability.id !== "CVE-2026-10003");
  return JSON.stringify(doc);
})();
const SEVERITY_RAISED = "dev.wharf.api.registry.vuln_report.severity_raised.v1";
const LONG_TTL = 24 * 3600;

interface VexStatement {
  status?: string;
  justification?: string;
  impactStatement?: string;
  actionStatement?: string;
  document?: string;
}
interface TenantReport {
  id: string;
  vulnerabilityCount?: string;
  suppressedCount?: string;
  vulnerabilityMatches: {
    vulnerability: { id: string };
    pkg: { purl?: string };
    suppressed?: boolean;
    vex?: VexStatement;
  }[];
}
interface ImageVulnReport {
  id: string;
  vulnerabilityCount?: string;
  suppressedCount?: string;
  vulnerabilities?: { id: string; suppressed?: boolean; vex?: VexStatement }[];
}
interface VexDocument {
  id: string;
  repoId: string;
  digest: string;
  documentId: string;
  source: string;
  referrer?: string;
  statementCount?: string;
  appliedCount?: string;
}

forEachEngine("VEX", (db) => {
  let wharf: TestServer;
  let receiver: WebhookReceiver;
  let admin: string;
  let acme: string;
  let repoUid: string;
  let registryToken: string;
  let v1: BuiltImage;

  const uploadVex = (digest: string, body: string | Uint8Array, token = admin, repo = repoUid) =>
    fetch(`${wharf.apiUrl}/registry/v1/vex/${repo}?digest=${digest}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body,
    });
  const uploadReport = (digest: string, body: string | Uint8Array) =>
    fetch(`${wharf.apiUrl}/registry/v1/vuln_reports/${repoUid}?digest=${digest}`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body,
    });
  const tenantReport = async (digest: string) =>
    expectJson<TenantReport>(
      await wharf.api(`/registry/v1/repos/${repoUid}/digests/${digest}/vulnreport`, { token: admin }),
    );
  const listed = async (digest: string) =>
    (
      await expectJson<{ items?: ImageVulnReport[] }>(
        await wharf.api(`/registry/v1/vuln_reports?digest=${digest}`, { token: admin }),
      )
    ).items ?? [];
  const matchOf = (report: TenantReport, id: string, purl?: string) =>
    report.vulnerabilityMatches.find((m) => m.vulnerability.id === id && (!purl || m.pkg.purl === purl));
  const suppressedIds = (report: TenantReport) =>
    report.vulnerabilityMatches.filter((m) => m.suppressed).map((m) => m.vulnerability.id);

  function pushReferrer(
    subject: BuiltImage,
    artifactType: string,
    layerType: string,
    layer: Buffer,
    annotations?: Record<string, string>,
  ): Promise<string> {
    return attachReferrer(wharf, "acme/app", registryToken, subject.digest, layer, {
      artifactType,
      layerMediaType: layerType,
      subjectSize: subject.manifest.length,
      ...(annotations ? { layerAnnotations: annotations } : {}),
    });
  }

  /** Referrers are read after the push is answered: wait until the report shows `count` suppressed matches. */
  async function suppressedWithin(digest: string, count: number): Promise<TenantReport> {
    let report = await tenantReport(digest);
    for (let i = 0; i < 100 && suppressedIds(report).length !== count; i++) {
      await new Promise((r) => setTimeout(r, 50));
      report = await tenantReport(digest);
    }
    return report;
  }

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    wharf = await startTestServer({
      config: { eventsAllowLoopback: "true" },
      ...(databaseUrl ? { databaseUrl } : {}),
    });
    receiver = await startWebhookReceiver();
    admin = await wharf.tokenFor(ADMIN_IDENTITY_UID, LONG_TTL);
    acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    registryToken = await wharf.registryToken(undefined, LONG_TTL);
    v1 = await pushImage(wharf, "acme/app", "latest", registryToken, buildImage("vex-v1"));
    const repos = await expectJson<{ repos: { uid: string }[] }>(
      await wharf.api(`/registry/v2/repos?uidp.descendants_of=${acme}&name=app`, { token: admin }),
    );
    repoUid = repos.repos[0]?.uid as string;
    assert.ok(repoUid);
  });
  after(async () => {
    await wharf.close();
    await receiver.close();
  });

  it("an uploaded OpenVEX document suppresses the matches it covers, with the statement, and counts drop", async () => {
    const report = await expectJson<ImageVulnReport>(await uploadReport(v1.digest, GRYPE));
    assert.equal(report.vulnerabilityCount, "4");
    assert.equal(report.suppressedCount ?? "0", "0");

    const stored = await expectJson<VexDocument>(
      await uploadVex(v1.digest, vexFor("openvex-not-affected.json", v1.digest)),
    );
    assert.equal(stored.repoId, repoUid);
    assert.equal(stored.digest, v1.digest);
    assert.equal(stored.source, "upload");
    assert.equal(stored.documentId, "https://openvex.dev/docs/example/vex-9fb3463de1b57");
    assert.equal(stored.statementCount, "4");
    assert.equal(stored.appliedCount, "3", "the statement about another image does not apply");

    const tenant = await tenantReport(v1.digest);
    assert.deepEqual(suppressedIds(tenant).sort(), ["CGA-2x3f-7c9q-m4hw", "CVE-2026-10003"]);
    assert.deepEqual(matchOf(tenant, "CVE-2026-10003")?.vex, {
      status: "not_affected",
      justification: "vulnerable_code_not_in_execute_path",
      impactStatement: "The service never logs user input through logkit's lookup formatter.",
      document: stored.id,
      timestamp: "2026-11-03T00:02:03.647Z",
    });
    assert.equal(matchOf(tenant, "CGA-2x3f-7c9q-m4hw")?.vex?.status, "fixed", "matched through its alias");
    const investigating = matchOf(tenant, "GHSA-abcd-1234-wxyz");
    assert.equal(investigating?.suppressed ?? false, false);
    assert.equal(investigating?.vex?.status, "under_investigation");
    assert.equal(matchOf(tenant, "CVE-2026-10004")?.vex, undefined);
    assert.equal(tenant.vulnerabilityCount, "2");
    assert.equal(tenant.suppressedCount, "2");

    const [listedReport] = await listed(v1.digest);
    assert.equal(listedReport?.vulnerabilityCount, "2");
    assert.equal(listedReport?.suppressedCount, "2");
    assert.deepEqual(
      listedReport?.vulnerabilities?.map((v) => [v.id, v.suppressed ?? false, v.vex?.justification ?? ""]),
      [
        ["CGA-2x3f-7c9q-m4hw", true, ""],
        ["GHSA-abcd-1234-wxyz", false, ""],
        ["CVE-2026-10003", true, "vulnerable_code_not_in_execute_path"],
        ["CVE-2026-10004", false, ""],
      ],
    );

    const today = new Date().toISOString().slice(0, 10);
    const counts = await expectJson<{ items: { cveIds?: string[]; critCveIds?: string[] }[] }>(
      await wharf.api(
        `/registry/v1/vuln_reports/counts?repo=app&tag=latest&from=${today}T00:00:00Z&to=${today}T23:59:59Z`,
        {
          token: admin,
        },
      ),
    );
    assert.deepEqual(
      counts.items.map((r) => r.cveIds),
      [["CVE-2026-10004", "GHSA-abcd-1234-wxyz"]],
    );
    assert.equal(counts.items[0]?.critCveIds, undefined, "the suppressed CRITICAL is not counted");
  });

  it("a later affected statement takes the suppression back", async () => {
    await expectJson<VexDocument>(
      await uploadVex(v1.digest, vexFor("openvex-affected-later.json", v1.digest)),
    );
    const tenant = await tenantReport(v1.digest);
    assert.deepEqual(suppressedIds(tenant), ["CGA-2x3f-7c9q-m4hw"]);
    const critical = matchOf(tenant, "CVE-2026-10003");
    assert.equal(critical?.suppressed ?? false, false);
    assert.equal(critical?.vex?.status, "affected");
    assert.match(critical?.vex?.actionStatement ?? "", /Upgrade logkit/);
    assert.equal(tenant.vulnerabilityCount, "3");
  });

  it("takes the document over Connect as bytes, and refuses bad input without storing anything", async () => {
    const v2 = await pushImage(wharf, "acme/app", "v2", registryToken, buildImage("vex-v2"));
    await expectJson(await uploadReport(v2.digest, GRYPE));
    const connect = (document: string) =>
      fetch(`${wharf.apiUrl}/platform.registry.v1.Vex/CreateVexDocument`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${admin}`,
          "content-type": "application/json",
          "connect-protocol-version": "1",
        },
        body: JSON.stringify({
          repoUid,
          digest: v2.digest,
          document: Buffer.from(document).toString("base64"),
        }),
      });
    await expectError(await uploadVex(v2.digest, "{ not json"), { status: 400, code: 3, field: "document" });
    const bad = await expectError(
      await uploadVex(
        v2.digest,
        vexFor("openvex-not-affected.json", v2.digest).replace('"fixed"', '"patched"'),
      ),
      { status: 400, code: 3, field: "document" },
    );
    assert.match(bad.message, /statements\[1\]\.status is "patched"/);
    const connectRefused = await connect('{"@context": "https://openvex.dev/ns/v0.2.0"}');
    assert.equal(connectRefused.status, 400);
    assert.match(((await connectRefused.json()) as { message: string }).message, /document: @id must be/);
    await expectError(
      await uploadVex(`sha256:${"0".repeat(64)}`, vexFor("openvex-not-affected.json", v2.digest)),
      {
        status: 404,
        code: 5,
      },
    );
    await expectError(await uploadVex(v2.digest, "x".repeat(4 * 1024 * 1024 + 1)), {
      status: 400,
      code: 3,
      field: "document",
    });
    assert.deepEqual(suppressedIds(await tenantReport(v2.digest)), [], "nothing was stored");
    const stored = await expectJson<VexDocument>(
      await connect(vexFor("openvex-not-affected.json", v2.digest)),
    );
    assert.equal(stored.appliedCount, "3");
    assert.deepEqual(suppressedIds(await tenantReport(v2.digest)).sort(), [
      "CGA-2x3f-7c9q-m4hw",
      "CVE-2026-10003",
    ]);
  });

  it("another organization's member cannot upload VEX to this repo", async () => {
    const other = await wharf.create("/iam/v2/groups", { name: "globex" });
    const eve = await personWithRole(wharf, "eve", other, "owner", { bindingToken: admin });
    const refused = await uploadVex(v1.digest, vexFor("openvex-not-affected.json", v1.digest), eve.token);
    assert.equal(refused.status, 403, await refused.text());
    const viewer = await personWithRole(wharf, "vera", acme, "viewer", { bindingToken: admin });
    const viewerRefused = await uploadVex(
      v1.digest,
      vexFor("openvex-not-affected.json", v1.digest),
      viewer.token,
    );
    assert.equal(viewerRefused.status, 403, "viewers may not upload");
  });

  it("an OpenVEX referrer, and a cosign openvex attestation (DSSE), suppress like an upload", async () => {
    const v3 = await pushImage(wharf, "acme/app", "v3", registryToken, buildImage("vex-v3"));
    await expectJson(await uploadReport(v3.digest, GRYPE));
    const referrer = await pushReferrer(
      v3,
      OPENVEX_MEDIA_TYPE,
      OPENVEX_MEDIA_TYPE,
      Buffer.from(vexFor("openvex-not-affected.json", v3.digest)),
    );
    const afterReferrer = await suppressedWithin(v3.digest, 2);
    assert.deepEqual(suppressedIds(afterReferrer).sort(), ["CGA-2x3f-7c9q-m4hw", "CVE-2026-10003"]);
    assert.ok(wharf.logLines.some((l) => l.msg === "VEX document stored" && l.subject === v3.digest));
    void referrer;

    const statement = vexFor("openvex-in-toto.json", v3.digest);
    const envelope = Buffer.from(
      JSON.stringify({
        payloadType: "application/vnd.in-toto+json",
        payload: Buffer.from(statement).toString("base64"),
        signatures: [{ keyid: "", sig: "MEUCIQDexample" }],
      }),
    );
    await pushReferrer(
      v3,
      "application/vnd.dsse.envelope.v1+json",
      "application/vnd.dsse.envelope.v1+json",
      envelope,
      {
        predicateType: "https://openvex.dev/ns",
      },
    );
    const afterAttestation = await suppressedWithin(v3.digest, 3);
    assert.deepEqual(suppressedIds(afterAttestation).sort(), [
      "CGA-2x3f-7c9q-m4hw",
      "CVE-2026-10003",
      "CVE-2026-10004",
    ]);
    assert.equal(
      matchOf(afterAttestation, "CVE-2026-10004")?.vex?.justification,
      "vulnerable_code_not_present",
    );
  });

  it("an in-toto statement referrer without predicate annotations is recognised by its content", async () => {
    const v4 = await pushImage(wharf, "acme/app", "v4", registryToken, buildImage("vex-v4"));
    await expectJson(await uploadReport(v4.digest, GRYPE));
    const statement = Buffer.from(vexFor("openvex-in-toto.json", v4.digest));
    await pushReferrer(v4, "application/vnd.in-toto+json", "application/vnd.in-toto+json", statement);
    const report = await suppressedWithin(v4.digest, 1);
    assert.deepEqual(suppressedIds(report), ["CVE-2026-10004"]);
  });

  it("a report raising the CRITICAL or HIGH count emits severity_raised per tag; a first or lower one does not", async () => {
    await wharf.create(`/events/v2/subscriptions/${acme}`, { sink: receiver.url() });
    const image = await pushImage(wharf, "acme/app", "rc", registryToken, buildImage("vex-raise"));
    await putManifest(wharf, "acme/app", "candidate", image.manifest, registryToken);
    const raised = () => receiver.accepted().filter((d) => d.headers["ce-type"] === SEVERITY_RAISED);

    await expectJson(await uploadReport(image.digest, GRYPE_WITHOUT_CRITICAL)); // first: compares with nothing
    const full = await expectJson<ImageVulnReport>(await uploadReport(image.digest, GRYPE)); // CRITICAL 0 → 1
    await expectJson(await uploadReport(image.digest, GRYPE_WITHOUT_CRITICAL)); // falls: nothing
    const last = await expectJson<ImageVulnReport>(await uploadReport(image.digest, GRYPE_WITHOUT_CRITICAL));
    // The created event of the last report is delivered after every severity_raised before it.
    await receiver.waitFor((a) => a.some((d) => d.headers["ce-subject"] === last.id));
    const events = raised();
    assert.equal(events.length, 2, "one per tag of the image, for the raising report only");
    const tags = await expectJson<{ tags: { uid: string; name: string }[] }>(
      await wharf.api(`/registry/v2/tags?uidp.children_of=${repoUid}`, { token: admin }),
    );
    const uidOf = (name: string) => tags.tags.find((t) => t.name === name)?.uid;
    assert.deepEqual(
      events.map((d) => d.headers["ce-subject"]).sort(),
      [uidOf("candidate"), uidOf("rc")].sort(),
    );
    const body = JSON.parse(events[0]?.body ?? "{}").body;
    assert.equal(body.repoId, repoUid);
    assert.equal(body.digest, image.digest);
    assert.equal(body.reportId, full.id);
    assert.equal(body.scanner, "GRYPE");
    assert.deepEqual(body.previous, { high: "1" });
    assert.deepEqual(body.current, { critical: "1", high: "1" });
    assert.deepEqual(body.newVulnerabilities, [
      { id: "CVE-2026-10003", severity: "CRITICAL", packageName: "logkit", packageVersion: "1.2.0" },
    ]);
    assert.ok(["rc", "candidate"].includes(body.tag));
  });
});
