import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { parseDigest } from "../../src/registry/digest.js";
import { blobKey } from "../../src/storage/blobs/blob-layout.js";
import { createS3BlobDriver } from "../../src/storage/blobs/s3/s3-blob-driver.js";
import { startTestS3rver, type TestS3rver } from "../conformance/blobs/blob-test-backends.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// The registry with `--blob-store s3://…` against s3rver: uploads (monolithic and chunked), pulls
// with ranges, and a digest mismatch storing nothing.

const sha256 = (b: Uint8Array) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

describe("the registry on S3 blob storage", async () => {
  const s3 = await startTestS3rver();
  const skip = "skip" in s3 ? s3.skip : undefined;
  let server: TestServer;
  let token: string;
  const registry = (path: string, init: Parameters<TestServer["registry"]>[1] = {}) =>
    server.registry(path, { token, ...init });

  before(async () => {
    if (skip) return;
    const { options } = s3 as TestS3rver;
    const url = new URL(`s3://${options.bucket}/wharf`);
    url.searchParams.set("endpoint", options.endpoint ?? "");
    url.searchParams.set("region", options.region ?? "us-east-1");
    url.searchParams.set("accessKeyId", options.credentials?.accessKeyId ?? "");
    url.searchParams.set("secretAccessKey", options.credentials?.secretAccessKey ?? "");
    server = await startTestServer({ config: { blobStore: url.toString() } });
    token = await server.registryToken();
    await server.create("/iam/v2/groups", { name: "s3org" });
  });
  after(async () => {
    await server?.close();
    if (!skip) await (s3 as TestS3rver).stop();
  });

  it("stores chunked and monolithic uploads in S3 and serves them back, ranges included", {
    skip,
  }, async () => {
    const blob = Buffer.from(Array.from({ length: 3 * 1024 * 1024 }, (_, i) => (i * 7) % 251));
    const post = await registry("/v2/s3org/app/blobs/uploads/", { method: "POST" });
    const location = post.headers.get("location") ?? "";
    const chunk = 1024 * 1024;
    for (let start = 0; start < blob.length; start += chunk) {
      const end = Math.min(start + chunk, blob.length);
      const res = await registry(location, {
        method: "PATCH",
        headers: { "content-range": `${start}-${end - 1}`, "content-length": String(end - start) },
        body: blob.subarray(start, end),
      });
      assert.equal(res.status, 202, await res.text());
    }
    const put = await registry(`${location}?digest=${sha256(blob)}`, { method: "PUT" });
    assert.equal(put.status, 201, await put.text());
    const get = await registry(`/v2/s3org/app/blobs/${sha256(blob)}`);
    assert.equal(sha256(Buffer.from(await get.arrayBuffer())), sha256(blob));
    const part = await registry(`/v2/s3org/app/blobs/${sha256(blob)}`, {
      headers: { range: "bytes=1048570-1048580" },
    });
    assert.equal(part.status, 206);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), blob.subarray(1048570, 1048581));

    const small = Buffer.from("monolithic on s3");
    const mono = await registry(`/v2/s3org/app/blobs/uploads/?digest=${sha256(small)}`, {
      method: "POST",
      body: small,
    });
    assert.equal(mono.status, 201);
    assert.equal(await (await registry(`/v2/s3org/app/blobs/${sha256(small)}`)).text(), "monolithic on s3");
  });

  it("stores nothing for a digest mismatch", { skip }, async () => {
    const bytes = Buffer.from("mismatched");
    const claimed = sha256(Buffer.from("other"));
    const res = await registry(`/v2/s3org/app/blobs/uploads/?digest=${claimed}`, {
      method: "POST",
      body: bytes,
    });
    assert.equal(res.status, 400);
    assert.equal((await registry(`/v2/s3org/app/blobs/${claimed}`, { method: "HEAD" })).status, 404);
  });

  it("answers 404 BLOB_UNKNOWN on GET and HEAD once the S3 object is gone, never a 200 cut short", {
    skip,
  }, async () => {
    const bytes = Buffer.from("about to vanish from the bucket");
    const digest = sha256(bytes);
    const post = await registry(`/v2/s3org/app/blobs/uploads/?digest=${digest}`, {
      method: "POST",
      body: bytes,
    });
    assert.equal(post.status, 201);
    const { options } = s3 as TestS3rver;
    const bucket = createS3BlobDriver({ ...options, prefix: "wharf" });
    try {
      await bucket.delete(blobKey(parseDigest(digest)));
    } finally {
      await bucket.close();
    }
    for (const method of ["GET", "HEAD"]) {
      const from = server.logLines.length;
      const res = await registry(`/v2/s3org/app/blobs/${digest}`, { method });
      assert.equal(res.status, 404, method);
      assert.equal(res.headers.get("docker-content-digest"), null, method);
      const body = await res.text();
      if (method === "GET") assert.equal((JSON.parse(body) as OciErrors).errors[0]?.code, "BLOB_UNKNOWN");
      const errors = server.logLines.slice(from).filter((l) => l.level === "error");
      assert.equal(errors.length, 1, `${method}: ${JSON.stringify(errors)}`);
    }
  });
});

interface OciErrors {
  errors: { code: string }[];
}
