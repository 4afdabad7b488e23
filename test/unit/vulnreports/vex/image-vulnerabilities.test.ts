import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { before, it } from "node:test";
import type { Principal } from "../../../../src/core/context.js";
import { newRootUid } from "../../../../src/core/uidp.js";
import { createEventRecorder } from "../../../../src/events/event-recorder.js";
import type { ImageVulnerabilities } from "../../../../src/registry/supply-chain/supply-chain.js";
import { createMemoryBlobDriver } from "../../../../src/storage/blobs/memory/memory-blob-driver.js";
import type { RepoRow } from "../../../../src/storage/registry-store.js";
import type { Store } from "../../../../src/storage/store.js";
import { ingestVulnReport } from "../../../../src/vulnreports/ingest.js";
import { createImageVulnerabilities } from "../../../../src/vulnreports/vex/image-vulnerabilities.js";
import { ingestVexDocument } from "../../../../src/vulnreports/vex/ingest-vex.js";
import { groupRow, repoRow } from "../../../conformance/store/fixtures.js";
import { forEachEngine } from "../../../support/databases.js";

const fixture = (name: string) =>
  readFileSync(new URL(`../../../fixtures/vulnreports/${name}`, import.meta.url));
const IMAGE = `sha256:${"a".repeat(64)}`;
const OTHER = `sha256:${"b".repeat(64)}`;

forEachEngine("image vulnerabilities (the policy evaluator's findings)", (db) => {
  let store: Store;
  let repo: RepoRow;
  let findings: ImageVulnerabilities;
  let now = Date.UTC(2026, 10, 1);
  const clock = { now: () => now };
  const principal = { identityUid: newRootUid(), claims: {} } as unknown as Principal;
  const blobs = createMemoryBlobDriver();
  const events = createEventRecorder({ apiUrl: "http://api.test", registryUrl: "http://registry.test" });
  const ingest = (digest: string, file: string) => {
    now += 1000;
    return ingestVulnReport(
      { store, blobs, events },
      { principal, clock },
      { repoUid: repo.uid, digest, source: fixture(file) },
    );
  };

  before(async () => {
    store = await db.openFresh();
    const org = groupRow("", "findings");
    await store.groups.insert(org);
    repo = repoRow(org.uid, "app");
    await store.repos.insert(repo);
    for (const digest of [IMAGE, OTHER]) {
      await store.manifests.put(
        {
          repoUid: repo.uid,
          digest,
          mediaType: "application/vnd.oci.image.manifest.v1+json",
          content: Buffer.from("{}"),
          createTime: 0,
        },
        [],
      );
    }
    findings = createImageVulnerabilities({ store });
  });

  it("answers undefined for an image without any report", async () => {
    assert.equal(await findings.unsuppressedFindings(repo.uid, IMAGE), undefined);
  });

  it("answers the current report's findings with fixable from the fix state or fix versions", async () => {
    await ingest(IMAGE, "grype.json");
    const got = await findings.unsuppressedFindings(repo.uid, IMAGE);
    assert.deepEqual(
      got?.map((f) => [f.vulnerabilityId, f.severity, f.fixable, f.packageName, f.packageVersion]),
      [
        ["CGA-2x3f-7c9q-m4hw", "HIGH", true, "libexampletls", "3.1.3-r0"],
        ["GHSA-abcd-1234-wxyz", "MEDIUM", true, "example.test/proto", "v0.20.0"],
        ["CVE-2026-10003", "CRITICAL", false, "logkit", "1.2.0"],
        ["CVE-2026-10004", "NEGLIGIBLE", false, "busybox", "1.36.1-r2"],
      ],
    );
  });

  it("joins the current reports of every scanner, and leaves superseded ones out", async () => {
    await ingest(IMAGE, "trivy.json");
    await ingest(IMAGE, "trivy.json");
    const ids = (await findings.unsuppressedFindings(repo.uid, IMAGE))?.map((f) => f.vulnerabilityId).sort();
    assert.deepEqual(ids, [
      "CGA-2x3f-7c9q-m4hw",
      "CVE-2026-10003",
      "CVE-2026-10004",
      "CVE-2026-20001",
      "CVE-2026-20002",
      "GHSA-abcd-1234-wxyz",
      "GHSA-abcd-1234-wxyz",
    ]);
    const trivyHigh = (await findings.unsuppressedFindings(repo.uid, IMAGE))?.find(
      (f) => f.vulnerabilityId === "CVE-2026-20001",
    );
    assert.equal(trivyHigh?.fixable, true, "Trivy's FixedVersion makes it fixable");
  });

  it("leaves out the matches VEX suppresses, and takes them back after a later affected statement", async () => {
    const vex = (name: string) =>
      ingestVexDocument(
        { store, events },
        { principal, clock },
        {
          repoUid: repo.uid,
          digest: IMAGE,
          bytes: readFileSync(new URL(`../../../fixtures/vex/${name}`, import.meta.url)),
          source: "upload",
        },
      );
    const ids = async () =>
      (await findings.unsuppressedFindings(repo.uid, IMAGE))?.map((f) => f.vulnerabilityId).sort();
    await vex("openvex-not-affected.json");
    assert.deepEqual(await ids(), [
      "CVE-2026-10004",
      "CVE-2026-20001",
      "CVE-2026-20002",
      "GHSA-abcd-1234-wxyz",
      "GHSA-abcd-1234-wxyz",
    ]);
    await vex("openvex-affected-later.json");
    assert.ok((await ids())?.includes("CVE-2026-10003"), "the later affected statement wins");
    assert.equal(
      await findings.unsuppressedFindings(repo.uid, OTHER),
      undefined,
      "another image is untouched",
    );
  });

  it("keeps images and repos apart", async () => {
    assert.equal(await findings.unsuppressedFindings(repo.uid, OTHER), undefined);
    assert.equal(await findings.unsuppressedFindings(`${repo.uid}x`, IMAGE), undefined);
  });
});
