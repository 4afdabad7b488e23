import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isValidBlobKey } from "../../../../src/storage/blobs/blob-driver.js";
import {
  BLOB_PROBE_KEY,
  BLOB_STORE_ID_KEY,
  BLOBS_PREFIX,
  blobKey,
  isUploadId,
  newUploadId,
  parseBlobKey,
  parseUploadKey,
  UPLOADS_PREFIX,
  uploadKey,
} from "../../../../src/storage/blobs/blob-layout.js";

// The one owner of Wharf's blob storage keys: what it builds parses back, what it did not build
// parses as nothing (the garbage collector relies on that to leave foreign objects alone).

const SHA256 = "ab".repeat(32);
const SHA512 = "0f".repeat(64);

describe("blob layout", () => {
  it("builds blob keys under blobs/<algorithm>/<first two hex>/<hex> and parses them back", () => {
    assert.equal(blobKey({ algorithm: "sha256", hex: SHA256 }), `blobs/sha256/ab/${SHA256}`);
    for (const address of [
      { algorithm: "sha256", hex: SHA256 },
      { algorithm: "sha512", hex: SHA512 },
    ]) {
      const key = blobKey(address);
      assert.ok(key.startsWith(BLOBS_PREFIX));
      assert.ok(isValidBlobKey(key), `${key} is a valid blob key`);
      assert.deepEqual(parseBlobKey(key), address);
    }
  });

  it("takes a registry digest as it is (algorithm and hex are all it reads)", () => {
    const digest = { algorithm: "sha256", hex: SHA256, value: `sha256:${SHA256}` };
    assert.deepEqual(parseBlobKey(blobKey(digest)), { algorithm: "sha256", hex: SHA256 });
  });

  it("refuses every key it would not build as a blob's", () => {
    for (const key of [
      "blobs/",
      "blobs/README",
      `blobs/sha256/${SHA256}`,
      `blobs/sha256/ab/${SHA256}/data`,
      `blobs/sha256/ab/${SHA256}.tmp`,
      `blobs/sha256/cd/${SHA256}`,
      `blobs/sha256/AB/${SHA256.toUpperCase()}`,
      `blobs/sha256/ab/${SHA256.toUpperCase()}`,
      `blobs/SHA256/ab/${SHA256}`,
      `blobs/sha-256/ab/${SHA256}`,
      `blobs/sha256/a/a`,
      `x/blobs/sha256/ab/${SHA256}`,
      `uploads/${"0".repeat(32)}`,
      BLOB_STORE_ID_KEY,
      BLOB_PROBE_KEY,
    ]) {
      assert.equal(parseBlobKey(key), undefined, key);
    }
  });

  it("builds upload keys under uploads/<id> for new ids and parses them back", () => {
    const id = newUploadId();
    assert.match(id, /^[0-9a-f]{32}$/);
    assert.ok(isUploadId(id));
    assert.notEqual(newUploadId(), id, "ids are random");
    const key = uploadKey(id);
    assert.equal(key, `uploads/${id}`);
    assert.ok(key.startsWith(UPLOADS_PREFIX));
    assert.ok(isValidBlobKey(key), `${key} is a valid blob key`);
    assert.equal(parseUploadKey(key), id);
  });

  it("refuses every key it would not build as an upload's", () => {
    const id = "0123456789abcdef0123456789abcdef";
    for (const key of [
      "uploads/",
      "uploads/notes",
      `uploads/${id}/data`,
      `uploads/${id}.partial`,
      `uploads/${id.slice(1)}`,
      `uploads/${id.toUpperCase()}`,
      `uploads/${id}${id}`,
      `x/uploads/${id}`,
      `blobs/sha256/ab/${SHA256}`,
      BLOB_STORE_ID_KEY,
      BLOB_PROBE_KEY,
    ]) {
      assert.equal(parseUploadKey(key), undefined, key);
    }
    for (const bad of ["", "notes", id.toUpperCase(), `${id}/data`, id.slice(1)]) {
      assert.equal(isUploadId(bad), false, bad);
    }
  });

  it("keeps the single objects valid keys outside both swept prefixes", () => {
    for (const key of [BLOB_STORE_ID_KEY, BLOB_PROBE_KEY]) {
      assert.ok(isValidBlobKey(key), key);
      assert.ok(!key.startsWith(BLOBS_PREFIX) && !key.startsWith(UPLOADS_PREFIX), key);
    }
    assert.equal(BLOB_STORE_ID_KEY, "wharf-store-id", "existing blob stores carry this name");
    assert.equal(BLOB_PROBE_KEY, "health/probe", "existing blob stores carry this name");
  });
});
