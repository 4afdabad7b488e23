import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { summaryOf } from "../../../../src/cli/server/fsck.js";
import { checkIntegrity } from "../../../../src/registry/data-plane/integrity-check.js";
import { keyOf } from "../../../../src/storage/backup/take-backup.js";
import type { BlobDriver } from "../../../../src/storage/blobs/blob-driver.js";
import { createFilesystemBlobDriver } from "../../../../src/storage/blobs/filesystem/filesystem-blob-driver.js";
import { openStore } from "../../../../src/storage/sql/open-store.js";
import type { Store } from "../../../../src/storage/store.js";
import { groupRow, repoRow, T0 } from "../../../conformance/store/fixtures.js";

const sha256 = (data: string) => `sha256:${createHash("sha256").update(data).digest("hex")}`;

// checkIntegrity on a real SQLite store and filesystem blob store holding a whole image and both
// kinds of orphan: orphans are listed and counted but are no damage, and the summary says clean.
describe("checkIntegrity with orphans only", () => {
  let dir: string;
  let store: Store;
  let blobs: BlobDriver;
  const orphanRow = sha256("linked, referenced by nothing");
  const strayFile = sha256("a file with no row");

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "wharf-fsck-"));
    store = await openStore({ sqlitePath: join(dir, "wharf.db") });
    blobs = createFilesystemBlobDriver({ root: join(dir, "blobs") });
    const group = groupRow("", "fsck-org");
    await store.groups.insert(group);
    const repo = repoRow(group.uid, "app");
    await store.repos.insert(repo);
    const put = async (text: string, record: boolean) => {
      await blobs.put(keyOf(sha256(text)), Readable.from([Buffer.from(text)]));
      if (record)
        await store.blobs.link(repo.uid, { digest: sha256(text), size: text.length, createTime: T0 }, T0);
    };
    await put("a layer", true);
    await put("linked, referenced by nothing", true);
    await put("a file with no row", false);
    const content = Buffer.from('{"image":1}');
    const digest = `sha256:${createHash("sha256").update(content).digest("hex")}`;
    await store.manifests.put(
      {
        repoUid: repo.uid,
        digest,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        content,
        createTime: T0,
      },
      [{ digest: sha256("a layer"), kind: "blob" }],
    );
    await store.tags.put({
      repoUid: repo.uid,
      name: "v1",
      digest,
      deprecated: false,
      newUid: `${repo.uid}/0000000000000001`,
      now: T0,
    });
  });
  after(async () => {
    await store.close();
    await blobs.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("lists a blob row no manifest references and a file with no row, and reports no damage", async () => {
    const report = await checkIntegrity({ store, blobs }, { deep: true, repair: false });
    assert.equal(report.damaged, false);
    assert.equal(report.checkedBlobs, 1);
    assert.deepEqual(report.damagedBlobs, []);
    assert.deepEqual(report.danglingTags, []);
    assert.deepEqual(report.orphans, {
      unreferencedBlobs: 1,
      strayFiles: 1,
      examples: { unreferencedBlobs: [orphanRow], strayFiles: [keyOf(strayFile)] },
    });
    const summary = summaryOf(report, false);
    assert.match(summary, new RegExp(`^orphan blob ${orphanRow} \\(no manifest references it\\)$`, "m"));
    assert.match(summary, new RegExp(`^orphan file ${keyOf(strayFile)} \\(no blob row\\)$`, "m"));
    assert.match(
      summary,
      /^clean: 1 blobs checked \(sizes and digests\), 0 damaged, 0 dangling tags, 1 unreferenced blobs and 1 files with no row, store ids match$/m,
    );
    assert.doesNotMatch(summary, /DAMAGE/);
  });
});
