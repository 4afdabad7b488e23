import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { loadConfig } from "../../../src/config/config.js";
import { storageLocationsOf } from "../../../src/config/storage-locations.js";

describe("storageLocationsOf", () => {
  it("names the SQLite file and the default blob folder of the data dir", () => {
    const config = loadConfig({ dataDir: "/srv/wharf" }, {});
    assert.deepEqual(storageLocationsOf(config), {
      database: join("/srv/wharf", "wharf.db"),
      blobStore: join("/srv/wharf", "blobs"),
    });
  });

  it("never shows a database password or an S3 secret", () => {
    const config = loadConfig(
      {
        databaseUrl: "postgres://wharf:hunter2@db.example:5432/wharf",
        blobStore: "s3://bucket/prefix?endpoint=http://127.0.0.1:9000&accessKeyId=AK&secretAccessKey=SK123",
      },
      {},
    );
    const where = storageLocationsOf(config);
    assert.equal(where.database, "postgres://wharf:***@db.example:5432/wharf");
    assert.match(where.blobStore, /^s3:\/\/bucket\/prefix\?/);
    assert.ok(!JSON.stringify(where).includes("hunter2") && !JSON.stringify(where).includes("SK123"));
  });

  it("resolves a relative blob folder against the working directory", () => {
    const config = loadConfig({ dataDir: "/srv/wharf", blobStore: "shared-blobs" }, {});
    assert.equal(storageLocationsOf(config).blobStore, join(process.cwd(), "shared-blobs"));
  });
});
