import { isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { activeTracer } from "../../core/tracing.js";
import type { BlobDriver } from "./blob-driver.js";
import { createFilesystemBlobDriver } from "./filesystem/filesystem-blob-driver.js";
import { createMemoryBlobDriver } from "./memory/memory-blob-driver.js";
import type { S3BlobDriverOptions } from "./s3/s3-blob-driver.js";
import { tracedBlobDriver } from "./traced-blob-driver.js";

/** What a blob storage URL selects: the driver and its options. */
export type BlobDriverConfig =
  | { kind: "filesystem"; root: string }
  | { kind: "s3"; options: S3BlobDriverOptions }
  | { kind: "memory" };

const S3_PARAMS = new Set(["endpoint", "region", "forcePathStyle", "accessKeyId", "secretAccessKey"]);

/**
 * Parses a blob storage setting (the `--blob-url` / `WHARF_BLOB_URL` kind of value):
 *
 * - `""` → filesystem at `<dataDir>/blobs`;
 * - a plain path (`/srv/blobs`, `./blobs`; relative to the working directory) or `file:///srv/blobs`
 *   → filesystem there;
 * - `s3://bucket[/key/prefix][?endpoint=http://127.0.0.1:9000&region=us-east-1&forcePathStyle=true]`
 *   → S3 (`forcePathStyle` defaults to true). Credentials come from the AWS SDK's chain (environment,
 *   shared profile, instance role) unless `accessKeyId` and `secretAccessKey` are both given as
 *   parameters (prefer the environment: URLs end up in logs; see {@link redactBlobDriverUrl});
 * - `memory:` → in-memory (tests, throwaway servers).
 *
 * Throws an `Error` naming the problem for anything else (unknown scheme or parameter, missing
 * bucket, credentials in the user-info part, only one of the two credential parameters, …). Error
 * messages never contain the secret.
 */
export function parseBlobDriverUrl(url: string, dataDir: string): BlobDriverConfig {
  const value = url.trim();
  if (value === "") return { kind: "filesystem", root: resolve(join(dataDir, "blobs")) };
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(value)?.[1]?.toLowerCase();
  if (scheme === undefined || isAbsolute(value)) return { kind: "filesystem", root: resolve(value) };
  const fail = (why: string): never => {
    throw new Error(`invalid blob storage URL ${JSON.stringify(redactBlobDriverUrl(value))}: ${why}`);
  };
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return fail("not a URL");
  }
  switch (scheme) {
    case "memory":
      if (value !== "memory:" && value !== "memory://") fail('use exactly "memory:"');
      return { kind: "memory" };
    case "file":
      if (parsed.host !== "") fail("file URLs must be local (file:///absolute/path)");
      if (parsed.search !== "" || parsed.hash !== "") fail("file URLs take no query or fragment");
      return { kind: "filesystem", root: fileURLToPath(parsed) };
    case "s3":
      return { kind: "s3", options: parseS3(parsed, fail) };
    default:
      return fail(
        `unsupported scheme "${scheme}:" (use a path, file:///path, s3://bucket/prefix or memory:)`,
      );
  }
}

function parseS3(url: URL, fail: (why: string) => never): S3BlobDriverOptions {
  if (url.username !== "" || url.password !== "") {
    fail("credentials do not belong in the user-info part; use the AWS environment/credential chain");
  }
  if (url.port !== "") fail("an S3 URL names a bucket, not a host:port (use ?endpoint=)");
  const bucket = decodeURIComponent(url.hostname);
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    fail(bucket === "" ? "missing bucket (s3://bucket/prefix)" : `invalid bucket name "${bucket}"`);
  }
  if (url.hash !== "") fail("S3 URLs take no fragment");
  const prefix = decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, "");
  if (prefix !== "" && !/^[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/.test(prefix)) {
    fail(`invalid key prefix "${prefix}" (segments of A-Z a-z 0-9 . _ ~ -)`);
  }
  const options: S3BlobDriverOptions = { bucket, ...(prefix !== "" && { prefix }) };
  const params = url.searchParams;
  for (const name of new Set(params.keys())) {
    if (!S3_PARAMS.has(name)) fail(`unknown parameter "${name}" (known: ${[...S3_PARAMS].join(", ")})`);
    if (params.getAll(name).length > 1) fail(`parameter "${name}" given more than once`);
  }
  const endpoint = params.get("endpoint");
  if (endpoint !== null) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(endpoint);
    } catch {}
    if (parsed === undefined || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
      fail("endpoint must be an http:// or https:// URL");
    }
    options.endpoint = endpoint;
  }
  const region = params.get("region");
  if (region !== null) {
    if (!/^[a-z0-9-]+$/.test(region)) fail(`invalid region "${region}"`);
    options.region = region;
  }
  const pathStyle = params.get("forcePathStyle");
  if (pathStyle !== null) {
    if (pathStyle !== "true" && pathStyle !== "false") fail('forcePathStyle must be "true" or "false"');
    options.forcePathStyle = pathStyle === "true";
  }
  const accessKeyId = params.get("accessKeyId");
  const secretAccessKey = params.get("secretAccessKey");
  if ((accessKeyId === null) !== (secretAccessKey === null)) {
    fail("give both accessKeyId and secretAccessKey, or neither (to use the AWS credential chain)");
  }
  if (accessKeyId !== null && secretAccessKey !== null) {
    if (accessKeyId === "" || secretAccessKey === "") fail("empty accessKeyId or secretAccessKey");
    options.credentials = { accessKeyId, secretAccessKey };
  }
  return options;
}

/**
 * `url` with secrets replaced by `***` (the `secretAccessKey` parameter, a user-info password), for
 * logs and error messages. Works on text as well (malformed URLs are redacted too).
 */
export function redactBlobDriverUrl(url: string): string {
  return url
    .replace(/([?&]secretAccessKey=)[^&#]*/gi, "$1***")
    .replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#:@]*):[^/?#@]*@/, "$1:***@");
}

/**
 * Opens the driver {@link parseBlobDriverUrl} selects for `url`; close it when done. The S3 driver
 * is loaded only when selected: the AWS SDK costs every process that loads it about 0.4 s of CPU.
 * While tracing is on (a tracer installed), each operation of the driver is a span.
 */
export async function openBlobDriver(url: string, dataDir: string): Promise<BlobDriver> {
  const driver = await openUntracedBlobDriver(url, dataDir);
  return activeTracer() === undefined ? driver : tracedBlobDriver(driver);
}

async function openUntracedBlobDriver(url: string, dataDir: string): Promise<BlobDriver> {
  const config = parseBlobDriverUrl(url, dataDir);
  switch (config.kind) {
    case "filesystem":
      return createFilesystemBlobDriver({ root: config.root });
    case "s3":
      return (await import("./s3/s3-blob-driver.js")).createS3BlobDriver(config.options);
    case "memory":
      return createMemoryBlobDriver();
  }
}
