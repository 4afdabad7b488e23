import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { after, before, describe, it } from "node:test";
import { ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import type { BlobDriver } from "../../../src/storage/blobs/blob-driver.js";
import { createFilesystemBlobDriver } from "../../../src/storage/blobs/filesystem/filesystem-blob-driver.js";
import { createMemoryBlobDriver } from "../../../src/storage/blobs/memory/memory-blob-driver.js";
import { parseBlobDriverUrl } from "../../../src/storage/blobs/open-blob-driver.js";
import {
  createS3BlobDriver,
  type S3BlobDriverOptions,
} from "../../../src/storage/blobs/s3/s3-blob-driver.js";

// The SDK warns once per process that its releases after January 2027 need Node 22: noise in tests.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

/** What every conformance case gets: the backend's driver and ways to look behind it. */
export interface BlobFixture {
  readonly kind: BlobDriver["kind"];
  /** The suite's driver (opened in a `before` hook; use it inside tests only). */
  readonly driver: BlobDriver;
  /** A fresh key namespace (`c7-…/`) so cases never see each other's objects. */
  ns(): string;
  /**
   * Every name the backend itself stores, to catch leftovers: filesystem → every file under the root
   * INCLUDING `_tmp/`; S3 → every raw key under the driver's prefix, `.parts/` chunks included;
   * memory → the driver's own listing.
   */
  rawKeys(): Promise<string[]>;
}

/** One backend the suite runs on, or the reason it cannot run here. */
interface Backend {
  readonly kind: BlobDriver["kind"];
  readonly skip?: string;
  open?(): Promise<{ driver: BlobDriver; rawKeys(): Promise<string[]>; dispose(): Promise<void> }>;
}

/**
 * Registers `body` once per backend (filesystem in a temp dir, memory, S3), each inside
 * `describe("<title> [<kind>]")` with its own driver, closed and cleaned up after the suite. Each
 * driver comes from its public factory, so it is wrapped in `validatingBlobDriver` exactly as
 * production opens it: the argument-check cases test the wrapper on every backend.
 *
 * S3 runs against `s3rver` started in-process on 127.0.0.1:0 with a temp directory, or against
 * `WHARF_TEST_S3_URL` (an `s3://bucket/prefix?endpoint=…` URL; each run uses a random sub-prefix)
 * when set. `WHARF_TEST_S3=skip`, or s3rver failing to start, makes the S3 suite one SKIPPED test
 * carrying the reason (never a silent pass). Must be awaited at module top level: probing s3rver
 * is asynchronous and node:test needs the tests registered synchronously after it.
 */
export async function forEachBlobDriver(title: string, body: (fx: BlobFixture) => void): Promise<void> {
  for (const backend of [filesystemBackend(), memoryBackend(), await s3Backend()]) {
    describe(`${title} [${backend.kind}]`, () => {
      if (backend.skip !== undefined || backend.open === undefined) {
        it(`runs on ${backend.kind}`, { skip: backend.skip ?? "unavailable" }, () => {});
        return;
      }
      let opened: Awaited<ReturnType<NonNullable<Backend["open"]>>> | undefined;
      let counter = 0;
      const run = randomBytes(3).toString("hex");
      before(async () => {
        opened = await backend.open!();
      });
      after(async () => {
        await opened?.dispose();
      });
      body({
        kind: backend.kind,
        get driver(): BlobDriver {
          if (opened === undefined) throw new Error("the driver is only available inside tests");
          return opened.driver;
        },
        ns: () => `c${++counter}-${run}/`,
        rawKeys: () => opened!.rawKeys(),
      });
    });
  }
}

function filesystemBackend(): Backend {
  return {
    kind: "filesystem",
    async open() {
      const root = await mkdtemp(join(tmpdir(), "wharf-blobs-"));
      const driver = createFilesystemBlobDriver({ root, fsync: false });
      return {
        driver,
        rawKeys: async () => {
          const entries = await readdir(root, { recursive: true, withFileTypes: true });
          return entries
            .filter((e) => !e.isDirectory())
            .map((e) => relative(root, join(e.parentPath, e.name)))
            .sort();
        },
        dispose: async () => {
          await driver.close();
          await rm(root, { recursive: true, force: true });
        },
      };
    },
  };
}

function memoryBackend(): Backend {
  return {
    kind: "memory",
    async open() {
      const driver = createMemoryBlobDriver();
      return {
        driver,
        rawKeys: async () => {
          const keys: string[] = [];
          for await (const entry of driver.list("")) keys.push(entry.key);
          return keys;
        },
        dispose: () => driver.close(),
      };
    },
  };
}

const S3RVER_BUCKET = "wharf-test";

async function s3Backend(): Promise<Backend> {
  if (process.env.WHARF_TEST_S3 === "skip") return { kind: "s3", skip: "S3 disabled by WHARF_TEST_S3=skip" };
  const url = process.env.WHARF_TEST_S3_URL;
  if (url !== undefined && url !== "") {
    const config = parseBlobDriverUrl(url, tmpdir());
    if (config.kind !== "s3") return { kind: "s3", skip: `WHARF_TEST_S3_URL is not an s3:// URL` };
    return s3BackendOn(config.options, async () => {});
  }
  const s3rver = await startTestS3rver();
  if ("skip" in s3rver) return { kind: "s3", skip: s3rver.skip };
  return s3BackendOn(s3rver.options, s3rver.stop);
}

/** An in-process s3rver for tests: driver options pointing at it, and how to stop it. */
export interface TestS3rver {
  /** Bucket, endpoint, region and credentials of the running server (add a prefix as needed). */
  options: S3BlobDriverOptions;
  /** Stops the server (dropping keep-alive connections) and removes its directory. */
  stop(): Promise<void>;
}

/**
 * Starts s3rver in this process on 127.0.0.1:0 with a temp directory and one bucket, or says why it
 * cannot. `onRequest` sees every request before s3rver does (to check what the client sends).
 */
export async function startTestS3rver(
  onRequest?: (req: IncomingMessage) => void,
): Promise<TestS3rver | { skip: string }> {
  const directory = await mkdtemp(join(tmpdir(), "wharf-s3rver-"));
  try {
    const { default: S3rver } = await import("s3rver");
    const s3rver = new S3rver({
      directory,
      silent: true,
      configureBuckets: [{ name: S3RVER_BUCKET, configs: [] }],
    });
    await s3rver.configureBuckets();
    const handle = s3rver.callback();
    const server = createServer((req, res) => {
      onRequest?.(req);
      handle(req, res);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", resolve);
    });
    const { port } = server.address() as AddressInfo;
    return {
      options: {
        bucket: S3RVER_BUCKET,
        endpoint: `http://127.0.0.1:${port}`,
        region: "us-east-1",
        credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
      },
      stop: async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await rm(directory, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(directory, { recursive: true, force: true });
    return { skip: `s3rver could not start in-process: ${(err as Error).message}` };
  }
}

/** An S3 backend on `base`, under a random sub-prefix of its prefix; `stop` runs after the suite. */
function s3BackendOn(base: S3BlobDriverOptions, stop: () => Promise<void>): Backend {
  return {
    kind: "s3",
    async open() {
      const prefix = [base.prefix, `conformance-${randomBytes(4).toString("hex")}`].filter(Boolean).join("/");
      const options = { ...base, prefix };
      const driver = createS3BlobDriver(options);
      const inspector = new S3Client({
        region: options.region ?? "us-east-1",
        ...(options.endpoint !== undefined && { endpoint: options.endpoint }),
        ...(options.credentials !== undefined && { credentials: options.credentials }),
        forcePathStyle: options.forcePathStyle ?? true,
        requestChecksumCalculation: "WHEN_REQUIRED",
        responseChecksumValidation: "WHEN_REQUIRED",
      });
      return {
        driver,
        rawKeys: async () => {
          const keys: string[] = [];
          let token: string | undefined;
          do {
            const out = await inspector.send(
              new ListObjectsV2Command({
                Bucket: options.bucket,
                Prefix: `${prefix}/`,
                ContinuationToken: token,
              }),
            );
            for (const o of out.Contents ?? []) keys.push(o.Key!.slice(prefix.length + 1));
            token = out.IsTruncated ? out.NextContinuationToken : undefined;
          } while (token !== undefined);
          return keys.sort();
        },
        dispose: async () => {
          const left: string[] = [];
          for await (const { key } of driver.list("")) left.push(key);
          for (const key of left) await driver.delete(key);
          await driver.close();
          inspector.destroy();
          await stop();
        },
      };
    },
  };
}
