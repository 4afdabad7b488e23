import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { after, before, describe, it } from "node:test";
import type { BlobDriver } from "../../../../src/storage/blobs/blob-driver.js";
import { createS3BlobDriver } from "../../../../src/storage/blobs/s3/s3-blob-driver.js";
import { startTestS3rver, type TestS3rver } from "../../../conformance/blobs/blob-test-backends.js";
import { BigPayload, readBytes, sha256Of, streamOf } from "../../../conformance/blobs/blob-test-data.js";

// S3-only guarantees, checked on the wire against an in-process s3rver that records each request:
// no checksum framing, path-style URLs, the chunk layout, the server-side copy fallback.

// The SDK warns once per process that its releases after January 2027 need Node 22: noise in tests.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
}

const MiB = 1024 * 1024;
const seen: Seen[] = [];
const server =
  process.env.WHARF_TEST_S3 === "skip"
    ? { skip: "S3 disabled by WHARF_TEST_S3=skip" }
    : await startTestS3rver((req) =>
        seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers }),
      );

describe("S3 blob driver on the wire", () => {
  if ("skip" in server) {
    it("runs against s3rver", { skip: server.skip }, () => {});
    return;
  }
  const s3: TestS3rver = server;
  let d: BlobDriver;
  before(() => {
    d = createS3BlobDriver({ ...s3.options, prefix: "/wharf/blobs/" });
  });
  after(async () => {
    await d.close();
    await s3.stop();
  });

  it("never sends flexible checksums or aws-chunked framing with object data", async () => {
    seen.length = 0;
    await d.put("small", streamOf("x"));
    await d.put("big", new BigPayload(11 * MiB).stream());
    await d.append("u", streamOf("chunk"));
    await d.commit("u", "v");
    const writes = seen.filter((r) => r.method === "PUT");
    assert.ok(writes.length >= 4, "PutObject, UploadPart ×2, chunk PutObject, CopyObject");
    for (const r of writes) {
      const offending = Object.keys(r.headers).filter(
        (h) =>
          h.startsWith("x-amz-checksum") || h === "x-amz-sdk-checksum-algorithm" || h === "x-amz-trailer",
      );
      assert.deepEqual(offending, [], `${r.method} ${r.url}`);
      assert.ok(!String(r.headers["content-encoding"] ?? "").includes("aws-chunked"), r.url);
      assert.ok(!String(r.headers["x-amz-content-sha256"] ?? "").startsWith("STREAMING-"), r.url);
    }
  });

  it("uses path-style URLs under the configured prefix", async () => {
    seen.length = 0;
    await d.put("a/b", streamOf("1"));
    assert.ok(seen.length > 0);
    assert.ok(
      seen.some((r) => r.method === "PUT" && r.url.startsWith("/wharf-test/wharf/blobs/a/b")),
      seen.map((r) => r.url).join("\n"),
    );
    for (const r of seen) assert.ok(r.url.startsWith("/wharf-test/"), r.url);
  });

  it("stores each appended chunk as <key>.parts/NNNNNNNN and removes them on commit", async () => {
    seen.length = 0;
    await d.append("uploads/x/data", streamOf("1"));
    await d.append("uploads/x/data", streamOf("22"));
    const puts = seen.filter((r) => r.method === "PUT").map((r) => r.url.split("?")[0]);
    assert.deepEqual(puts, [
      "/wharf-test/wharf/blobs/uploads/x/data.parts/00000001",
      "/wharf-test/wharf/blobs/uploads/x/data.parts/00000002",
    ]);
    await d.commit("uploads/x/data", "blobs/x");
    assert.deepEqual(await readBytes(d, "blobs/x"), Buffer.from("122"));
    const deleted = seen.filter((r) => r.method === "POST" && r.url.includes("delete"));
    assert.ok(deleted.length > 0, "chunks removed with DeleteObjects");
  });

  it("tries UploadPartCopy first, then streams concatenations when the server lacks it", async () => {
    const payload = new BigPayload(11 * MiB);
    for (const round of [1, 2]) {
      seen.length = 0;
      await d.append(`up${round}`, payload.stream(65_536, 0, 6 * MiB));
      await d.append(`up${round}`, payload.stream(65_536, 6 * MiB));
      await d.commit(`up${round}`, `done${round}`);
      assert.equal(await sha256Of(await d.read(`done${round}`)), await payload.digest());
      const partCopies = seen.filter(
        (r) => r.method === "PUT" && r.url.includes("uploadId=") && "x-amz-copy-source" in r.headers,
      );
      if (round === 1) assert.ok(partCopies.length > 0, "server-side concatenation attempted first");
      else assert.equal(partCopies.length, 0, "not retried once the server said NotImplemented");
    }
  });
});
