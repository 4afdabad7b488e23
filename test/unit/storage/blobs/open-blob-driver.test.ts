import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import {
  openBlobDriver,
  parseBlobDriverUrl,
  redactBlobDriverUrl,
} from "../../../../src/storage/blobs/open-blob-driver.js";
import { streamOf } from "../../../conformance/blobs/blob-test-data.js";

// The SDK warns once per process that its releases after January 2027 need Node 22: noise in tests.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

describe("parseBlobDriverUrl", () => {
  it('defaults "" to the filesystem under <dataDir>/blobs', () => {
    assert.deepEqual(parseBlobDriverUrl("", "/srv/wharf"), { kind: "filesystem", root: "/srv/wharf/blobs" });
    assert.deepEqual(parseBlobDriverUrl("  ", "./data"), { kind: "filesystem", root: resolve("data/blobs") });
  });

  it("takes plain paths and file:/// URLs as filesystem roots", () => {
    assert.deepEqual(parseBlobDriverUrl("/var/lib/blobs", "/d"), {
      kind: "filesystem",
      root: "/var/lib/blobs",
    });
    assert.deepEqual(parseBlobDriverUrl("rel/blobs", "/d"), {
      kind: "filesystem",
      root: resolve("rel/blobs"),
    });
    assert.deepEqual(parseBlobDriverUrl("file:///var/lib/my%20blobs", "/d"), {
      kind: "filesystem",
      root: "/var/lib/my blobs",
    });
  });

  it("selects memory for memory:", () => {
    assert.deepEqual(parseBlobDriverUrl("memory:", "/d"), { kind: "memory" });
  });

  it("parses s3:// URLs: bucket, prefix, endpoint, region, path style", () => {
    assert.deepEqual(parseBlobDriverUrl("s3://my-bucket", "/d"), {
      kind: "s3",
      options: { bucket: "my-bucket" },
    });
    assert.deepEqual(
      parseBlobDriverUrl(
        "s3://my-bucket/wharf/blobs/?endpoint=http://127.0.0.1:9000&region=eu-west-1&forcePathStyle=false",
        "/d",
      ),
      {
        kind: "s3",
        options: {
          bucket: "my-bucket",
          prefix: "wharf/blobs",
          endpoint: "http://127.0.0.1:9000",
          region: "eu-west-1",
          forcePathStyle: false,
        },
      },
    );
  });

  it("takes static credentials only as a pair of parameters", () => {
    assert.deepEqual(parseBlobDriverUrl("s3://bkt?accessKeyId=AKIA1&secretAccessKey=s3cr3t", "/d"), {
      kind: "s3",
      options: { bucket: "bkt", credentials: { accessKeyId: "AKIA1", secretAccessKey: "s3cr3t" } },
    });
  });

  it("rejects invalid values with a message naming the problem, never the secret", () => {
    const cases: [string, RegExp][] = [
      ["s3://", /missing bucket/],
      ["s3://B_ad", /invalid bucket name/],
      ["s3://bkt?foo=1", /unknown parameter "foo"/],
      ["s3://bkt?region=a&region=b", /more than once/],
      ["s3://bkt?endpoint=ftp://x", /endpoint must be an http/],
      ["s3://bkt?forcePathStyle=yes", /forcePathStyle must be/],
      ["s3://bkt?secretAccessKey=s3cr3t", /both accessKeyId and secretAccessKey/],
      ["s3://AKIA1:s3cr3t@bkt", /user-info/],
      ["s3://bkt:9000", /not a host:port/],
      ["s3://bkt/a//b", /invalid key prefix/],
      ["s3://bkt/a b?secretAccessKey=s3cr3t&accessKeyId=x", /invalid key prefix/],
      ["gs://bkt", /unsupported scheme "gs:"/],
      ["memory://x", /use exactly "memory:"/],
      ["file://host/x", /must be local/],
      ["file:///x?y=1", /no query/],
    ];
    for (const [url, why] of cases) {
      assert.throws(
        () => parseBlobDriverUrl(url, "/d"),
        (err: unknown) => {
          assert.ok(err instanceof Error);
          assert.match(err.message, /^invalid blob storage URL /);
          assert.match(err.message, why, url);
          assert.ok(!err.message.includes("s3cr3t"), `secret leaked: ${err.message}`);
          return true;
        },
      );
    }
  });
});

describe("redactBlobDriverUrl", () => {
  it("hides the secret parameter and a user-info password", () => {
    assert.equal(
      redactBlobDriverUrl("s3://b/p?accessKeyId=AK&secretAccessKey=s3cr3t&region=x"),
      "s3://b/p?accessKeyId=AK&secretAccessKey=***&region=x",
    );
    assert.equal(redactBlobDriverUrl("s3://AK:s3cr3t@b/p"), "s3://AK:***@b/p");
    assert.equal(redactBlobDriverUrl("s3://b/p?endpoint=http://h:9000"), "s3://b/p?endpoint=http://h:9000");
    assert.equal(redactBlobDriverUrl("/plain/path"), "/plain/path");
  });
});

describe("openBlobDriver", () => {
  it("opens a working filesystem driver at the parsed root", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "wharf-open-"));
    try {
      const driver = await openBlobDriver("", dataDir);
      assert.equal(driver.kind, "filesystem");
      await driver.put("k", streamOf("v"));
      assert.equal(await readFile(join(dataDir, "blobs", "k"), "utf8"), "v");
      await driver.close();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("opens memory and S3 drivers without network access", async () => {
    const memory = await openBlobDriver("memory:", "/d");
    assert.equal(memory.kind, "memory");
    await memory.close();
    const s3 = await openBlobDriver(
      "s3://bkt/pre?endpoint=http://127.0.0.1:1&accessKeyId=a&secretAccessKey=b",
      "/d",
    );
    assert.equal(s3.kind, "s3");
    await s3.close();
  });
});
