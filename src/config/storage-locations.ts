import type { StorageLocations } from "../storage/blob-store-identity.js";
import { parseBlobDriverUrl, redactBlobDriverUrl } from "../storage/blobs/open-blob-driver.js";
import { redactUrl, type WharfConfig } from "./config.js";
import { sqlitePathOf } from "./open-configured-store.js";

/**
 * Where the configuration keeps metadata and blobs, for messages: the PostgreSQL URL without its
 * password (or the SQLite file), and the blob store's folder (or its URL without secrets).
 */
export function storageLocationsOf(config: WharfConfig): StorageLocations {
  const blobs = parseBlobDriverUrl(config.blobStore, config.dataDir);
  return {
    database: config.databaseUrl ? redactUrl(config.databaseUrl) : sqlitePathOf(config),
    blobStore: blobs.kind === "filesystem" ? blobs.root : redactBlobDriverUrl(config.blobStore.trim()),
  };
}
