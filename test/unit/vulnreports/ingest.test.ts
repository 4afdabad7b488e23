import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Readable } from "node:stream";
import { before, it } from "node:test";
import { Code } from "@connectrpc/connect";
import type { Principal } from "../../../src/core/context.js";
import { DomainError } from "../../../src/core/errors.js";
import { newRootUid } from "../../../src/core/uidp.js";
import { createEventRecorder } from "../../../src/events/event-recorder.js";
import { collectGarbage } from "../../../src/registry/data-plane/garbage-collector.js";
import { parseDigest, sha256Digest } from "../../../src/registry/digest.js";
import type { BlobDriver } from "../../../src/storage/blobs/blob-driver.js";
import { blobKey, UPLOADS_PREFIX } from "../../../src/storage/blobs/blob-layout.js";
import { createMemoryBlobDriver } from "../../../src/storage/blobs/memory/memory-blob-driver.js";
import type { RepoRow } from "../../../src/storage/registry-store.js";
import type { Store } from "../../../src/storage/store.js";
import { ingestVulnReport } from "../../../src/vulnreports/ingest.js";
import { groupRow, repoRow } from "../../conformance/store/fixtures.js";
import { forEachEngine } from "../../support/databases.js";

const GRYPE = readFileSync(new URL("../../fixtures/vulnreports/grype.json", import.meta.url));
const HOUR = 60 * 60 * 1000;
const IMAGE = `sha256:${"a".repeat(64)}`;

forEachEngine("vulnerability report ingestion", (db) => {
  let store: Store;
  let blobs: BlobDriver;
  let repo: RepoRow;
  let now = Date.UTC(2026, 10, 1);
  const clock = { now: () => now };
  const principal = { identityUid: newRootUid(), claims: {} } as unknown as Principal;
  const deps = () => ({
    store,
    blobs,
    events: createEventRecorder({
      apiUrl: "http://api.test",
      registryUrl: "http://registry.test",
    }),
    vulnReportMaxBytes: 64 * 1024,
  });
  const ingest = (source: Uint8Array | AsyncIterable<Uint8Array>) =>
    ingestVulnReport(deps(), { principal, clock }, { repoUid: repo.uid, digest: IMAGE, source });
  async function objects(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    for await (const o of blobs.list(prefix)) keys.push(o.key);
    return keys;
  }

  before(async () => {
    store = await db.openFresh();
    blobs = createMemoryBlobDriver();
    const org = groupRow("", "ingest");
    await store.groups.insert(org);
    repo = repoRow(org.uid, "app");
    await store.repos.insert(repo);
    await putImage();
  });
  const putImage = () =>
    store.manifests.put(
      {
        repoUid: repo.uid,
        digest: IMAGE,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        content: Buffer.from("{}"),
        createTime: 0,
      },
      [],
    );

  it("keeps the raw bytes content-addressed, and garbage collection keeps them while a report names them", async () => {
    const { row } = await ingest(Readable.from([GRYPE.subarray(0, 1000), GRYPE.subarray(1000)]));
    assert.equal(row.rawDigest, sha256Digest(GRYPE));
    assert.equal(row.rawSize, GRYPE.length);
    const key = blobKey(parseDigest(row.rawDigest));
    assert.deepEqual(await objects(UPLOADS_PREFIX), [], "no temporary object is left");
    // No repo links the blob and no manifest references it: only the report keeps it.
    now += 48 * HOUR;
    await collectGarbage({ store, blobs, clock }, { graceMs: HOUR, historyWindowMs: HOUR });
    assert.ok(await blobs.stat(key), "the raw report survived garbage collection");
    assert.ok(await store.blobs.get(row.rawDigest));
    assert.equal(
      await store.manifests.has(repo.uid, IMAGE),
      false,
      "the untagged image itself was collected",
    );
    assert.ok(await store.vulnReports.get(row.uid), "its report stays");
  });

  it("stores nothing, and leaves no bytes, for a broken or oversized report", async () => {
    await putImage(); // the collection above removed the untagged image (its reports stay)
    const before = await store.vulnReports.list({ repoUid: repo.uid }, 100);
    const broken = Buffer.from('{"matches": [ {"vulnerability": ');
    await assert.rejects(
      ingest(broken),
      (err: unknown) => err instanceof DomainError && err.code === Code.InvalidArgument,
    );
    await assert.rejects(
      ingest(
        Buffer.from(
          JSON.stringify({ matches: [], descriptor: { name: "grype", pad: "x".repeat(70 * 1024) } }),
        ),
      ),
      (err: unknown) => err instanceof DomainError && err.code === Code.ResourceExhausted,
    );
    assert.equal((await store.vulnReports.list({ repoUid: repo.uid }, 100)).length, before.length);
    assert.deepEqual(await objects(UPLOADS_PREFIX), []);
    assert.equal(await blobs.stat(blobKey(parseDigest(sha256Digest(broken)))), undefined);
  });

  it("refuses a digest the repo does not hold with NOT_FOUND naming the manifest", async () => {
    await assert.rejects(
      ingestVulnReport(
        deps(),
        { principal, clock },
        { repoUid: repo.uid, digest: `sha256:${"b".repeat(64)}`, source: GRYPE },
      ),
      (err: unknown) =>
        err instanceof DomainError &&
        err.code === Code.NotFound &&
        err.details.resource?.resourceType === "manifest",
    );
  });
});
