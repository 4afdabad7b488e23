/**
 * Deterministic OCI image layouts for registry end-to-end tests, written with Node alone (a small
 * ustar writer and node:zlib) so the same inputs always give the same bytes, hence the same digests.
 *
 * A layout directory follows https://github.com/opencontainers/image-spec/blob/main/image-layout.md:
 * `oci-layout`, `index.json` (one entry per tag, named by the `org.opencontainers.image.ref.name`
 * annotation) and `blobs/sha256/<hex>`. Real clients read it, e.g.
 * `skopeo copy --dest-tls-verify=false oci:<dir>:<tag> docker://127.0.0.1:<port>/<repo>:<tag>`.
 *
 * Determinism: tar headers carry mtime 0, uid/gid 0, empty user/group names, mode 0644 (files) and
 * 0755 (directories); entries are sorted by path; gzip uses a fixed level, and its header (mtime 0, no
 * file name, XFL fixed by the level) has its OS byte pinned to Unix. JSON documents are serialized with
 * a fixed key order and no whitespace. The compressed bytes depend on the zlib that Node bundles, so
 * compute digests at run time (they are the same on every call in a given Node build) rather than
 * pasting them into tests.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

/** Media type of an OCI image manifest. */
export const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
/** Media type of an OCI image index (multi-platform image, and the layout's `index.json`). */
export const OCI_INDEX = "application/vnd.oci.image.index.v1+json";
/** Media type of an OCI image config. */
export const OCI_CONFIG = "application/vnd.oci.image.config.v1+json";
/** Media type of a gzip-compressed tar layer. */
export const OCI_LAYER_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip";
/** The annotation carrying a tag in a layout's `index.json`. */
export const REF_NAME = "org.opencontainers.image.ref.name";

/** Files of an image: path inside the image (no `..` segments) → content (strings are UTF-8). */
export type ImageFiles = Record<string, string | Buffer>;

/** What {@link writeImageLayout} wrote for one tag. */
export interface ImageLayoutResult {
  /** `sha256:…` of the manifest bytes (the image's digest as a registry reports it). */
  manifestDigest: string;
  /** `sha256:…` of the image config blob. */
  configDigest: string;
  /** `sha256:…` of each compressed layer blob, in manifest order. */
  layerDigests: string[];
  /** Length in bytes of the manifest. */
  manifestSize: number;
  /** Bytes of the config blob plus every layer blob (what a push uploads besides the manifest). */
  size: number;
}

/** One platform of a {@link writeMultiArchLayout} image. */
export interface PlatformSpec {
  /** GOARCH style: `amd64`, `arm64`, … */
  architecture: string;
  /** GOOS style: `linux`, … */
  os: string;
  /** Optional CPU variant, e.g. `v8` for arm64. */
  variant?: string;
  files: ImageFiles;
}

/** What {@link writeMultiArchLayout} wrote for one tag. */
export interface MultiArchLayoutResult {
  /** `sha256:…` of the image index bytes (the tag's digest as a registry reports it). */
  indexDigest: string;
  /** Length in bytes of the image index. */
  indexSize: number;
  /** One entry per platform, in the order given. */
  platforms: {
    architecture: string;
    os: string;
    variant?: string;
    /** `sha256:…` of this platform's image manifest. */
    manifestDigest: string;
    /** Length in bytes of this platform's manifest. */
    manifestSize: number;
    /** Bytes of this platform's config plus layers. */
    size: number;
  }[];
}

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  platform?: { architecture: string; os: string; variant?: string };
}

/** The `sha256:<hex>` digest of `data`. */
export function digestOf(data: Buffer | string): string {
  return `sha256:${createHash("sha256").update(data).digest("hex")}`;
}

/** The bytes of blob `digest` (`sha256:<hex>`) in the layout at `dir`; throws when it is absent. */
export function layoutBlob(dir: string, digest: string): Buffer {
  return readFileSync(blobPath(dir, digest));
}

/**
 * Writes a single-platform OCI image (manifest, config with `rootfs.diff_ids`, gzip layers) into the
 * layout at `dir` (created if needed) and names it `tag` in `index.json`. Calls with other tags into the
 * same `dir` add to `index.json` (one layout can hold `v1` and `v2`); a call with an existing tag
 * replaces that entry. Blobs shared between images (same files → same layer) are stored once.
 *
 * `files` are split round-robin (by sorted path) over `layers` layers (default 1); a layer that would
 * be empty gets a marker file `.layer-<i>` so that every layer of a manifest is a distinct blob.
 * `architecture`/`os` default to `amd64`/`linux`.
 */
export function writeImageLayout(
  dir: string,
  opts: { tag: string; files: ImageFiles; architecture?: string; os?: string; layers?: number },
): Promise<ImageLayoutResult> {
  return underLock(dir, async () => {
    const image = await writeImage(dir, {
      architecture: opts.architecture ?? "amd64",
      os: opts.os ?? "linux",
      files: opts.files,
      layers: opts.layers ?? 1,
    });
    await addToIndex(dir, opts.tag, {
      mediaType: OCI_MANIFEST,
      digest: image.manifestDigest,
      size: image.manifestSize,
    });
    return image;
  });
}

/**
 * Writes a multi-platform image: one OCI image manifest per platform (one layer each) and an OCI image
 * index listing them with their `platform`, named `tag` in the layout's `index.json` (merged like
 * {@link writeImageLayout}). Copy it whole with `skopeo copy --all` (or `--multi-arch all`); without it
 * skopeo copies only the manifest matching the host platform.
 */
export function writeMultiArchLayout(
  dir: string,
  opts: { tag: string; platforms: PlatformSpec[] },
): Promise<MultiArchLayoutResult> {
  return underLock(dir, async () => {
    const platforms: MultiArchLayoutResult["platforms"] = [];
    const manifests: Descriptor[] = [];
    for (const p of opts.platforms) {
      const image = await writeImage(dir, { ...p, layers: 1 });
      const platform =
        p.variant === undefined
          ? { architecture: p.architecture, os: p.os }
          : { architecture: p.architecture, os: p.os, variant: p.variant };
      manifests.push({
        mediaType: OCI_MANIFEST,
        digest: image.manifestDigest,
        size: image.manifestSize,
        platform,
      });
      platforms.push({
        ...platform,
        manifestDigest: image.manifestDigest,
        manifestSize: image.manifestSize,
        size: image.size,
      });
    }
    const index = await putBlob(dir, json({ schemaVersion: 2, mediaType: OCI_INDEX, manifests }));
    await addToIndex(dir, opts.tag, { mediaType: OCI_INDEX, digest: index.digest, size: index.size });
    return { indexDigest: index.digest, indexSize: index.size, platforms };
  });
}

async function writeImage(
  dir: string,
  opts: { architecture: string; os: string; variant?: string; files: ImageFiles; layers: number },
): Promise<ImageLayoutResult> {
  if (!Number.isInteger(opts.layers) || opts.layers < 1)
    throw new Error(`layers must be ≥ 1: ${opts.layers}`);
  await ensureLayout(dir);
  const paths = Object.keys(opts.files)
    .map((p) => [normalizePath(p), p] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const layers: Descriptor[] = [];
  const diffIds: string[] = [];
  for (let i = 0; i < opts.layers; i++) {
    const entries: [string, Buffer][] = [];
    for (let j = i; j < paths.length; j += opts.layers) {
      const [path, key] = paths[j]!;
      const content = opts.files[key]!;
      entries.push([path, typeof content === "string" ? Buffer.from(content, "utf8") : content]);
    }
    if (entries.length === 0) entries.push([`.layer-${i}`, Buffer.alloc(0)]);
    const tar = tarOf(entries);
    diffIds.push(digestOf(tar));
    const blob = await putBlob(dir, gzip(tar));
    layers.push({ mediaType: OCI_LAYER_GZIP, digest: blob.digest, size: blob.size });
  }
  const config = await putBlob(
    dir,
    json({
      architecture: opts.architecture,
      os: opts.os,
      ...(opts.variant === undefined ? {} : { variant: opts.variant }),
      config: {},
      rootfs: { type: "layers", diff_ids: diffIds },
    }),
  );
  const manifest = await putBlob(
    dir,
    json({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: OCI_CONFIG, digest: config.digest, size: config.size },
      layers,
    }),
  );
  return {
    manifestDigest: manifest.digest,
    configDigest: config.digest,
    layerDigests: layers.map((l) => l.digest),
    manifestSize: manifest.size,
    size: config.size + layers.reduce((sum, l) => sum + l.size, 0),
  };
}

// ---- layout files ----

function blobPath(dir: string, digest: string): string {
  const m = /^sha256:([0-9a-f]{64})$/.exec(digest);
  if (!m) throw new Error(`not a sha256 digest: ${digest}`);
  return join(dir, "blobs", "sha256", m[1]!);
}

async function ensureLayout(dir: string): Promise<void> {
  await mkdir(join(dir, "blobs", "sha256"), { recursive: true });
  await writeFile(join(dir, "oci-layout"), json({ imageLayoutVersion: "1.0.0" }));
}

async function putBlob(dir: string, data: Buffer): Promise<{ digest: string; size: number }> {
  const digest = digestOf(data);
  await writeFile(blobPath(dir, digest), data);
  return { digest, size: data.length };
}

/** Names `descriptor` `tag` in `index.json`, replacing an entry of the same tag; entries sorted by tag. */
async function addToIndex(dir: string, tag: string, descriptor: Descriptor): Promise<void> {
  const path = join(dir, "index.json");
  let manifests: Descriptor[] = [];
  try {
    const existing = JSON.parse(await readFile(path, "utf8")) as { manifests?: Descriptor[] };
    manifests = existing.manifests ?? [];
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  const tagOf = (d: Descriptor) => d.annotations?.[REF_NAME] ?? "";
  manifests = manifests.filter((d) => tagOf(d) !== tag);
  manifests.push({ ...descriptor, annotations: { [REF_NAME]: tag } });
  manifests.sort((a, b) => (tagOf(a) < tagOf(b) ? -1 : tagOf(a) > tagOf(b) ? 1 : 0));
  const tmp = `${path}.tmp`;
  await writeFile(tmp, json({ schemaVersion: 2, mediaType: OCI_INDEX, manifests }));
  await rename(tmp, path);
}

const locks = new Map<string, Promise<unknown>>();

/** Runs `fn` after every earlier call on `dir` (in this process), so index.json merges never race. */
function underLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const previous = locks.get(dir) ?? Promise.resolve();
  const next = previous.then(fn, fn);
  const settled = next.catch(() => {});
  locks.set(dir, settled);
  void settled.then(() => {
    if (locks.get(dir) === settled) locks.delete(dir);
  });
  return next;
}

function json(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), "utf8");
}

// ---- gzip ----

const GZIP_LEVEL = 9;

/**
 * gzip with a deterministic header: zlib writes mtime 0, no name, no extra fields and XFL fixed by the
 * level; byte 9 (OS) is set to 3 (Unix) so the header does not vary with the platform zlib was built for.
 */
function gzip(data: Buffer): Buffer {
  const out = gzipSync(data, { level: GZIP_LEVEL });
  out[9] = 3;
  return out;
}

// ---- ustar ----

const BLOCK = 512;

/** Strips `./` and leading `/`, rejects empty paths, `.`/`..` segments and NUL. */
function normalizePath(path: string): string {
  const segments = path
    .replace(/^(\.\/)+/, "")
    .split("/")
    .filter((s) => s !== "");
  if (segments.length === 0 || segments.some((s) => s === "." || s === ".." || s.includes("\0"))) {
    throw new Error(`invalid image file path: ${JSON.stringify(path)}`);
  }
  return segments.join("/");
}

/**
 * A POSIX ustar archive of `files` (already normalized and sorted), preceded by entries for their parent
 * directories, each emitted once before its first child; ends with two zero blocks.
 */
function tarOf(files: [string, Buffer][]): Buffer {
  const parts: Buffer[] = [];
  const dirs = new Set<string>();
  for (const [path, content] of files) {
    const segments = path.split("/");
    for (let i = 1; i < segments.length; i++) {
      const dir = `${segments.slice(0, i).join("/")}/`;
      if (dirs.has(dir)) continue;
      dirs.add(dir);
      parts.push(tarHeader(dir, 0, "5", 0o755));
    }
    parts.push(tarHeader(path, content.length, "0", 0o644), content);
    const pad = (BLOCK - (content.length % BLOCK)) % BLOCK;
    if (pad > 0) parts.push(Buffer.alloc(pad));
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}

function tarHeader(path: string, size: number, type: "0" | "5", mode: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  const [prefix, name] = splitName(path);
  h.write(name, 0, 100, "utf8");
  octal(h, 100, 8, mode);
  octal(h, 108, 8, 0); // uid
  octal(h, 116, 8, 0); // gid
  octal(h, 124, 12, size);
  octal(h, 136, 12, 0); // mtime
  h.fill(0x20, 148, 156); // checksum placeholder: eight spaces
  h.write(type, 156, 1, "ascii");
  h.write("ustar\0", 257, 6, "ascii");
  h.write("00", 263, 2, "ascii");
  // uname/gname stay empty; devmajor/devminor are zero-filled octal.
  octal(h, 329, 8, 0);
  octal(h, 337, 8, 0);
  h.write(prefix, 345, 155, "utf8");
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8, "ascii");
  return h;
}

/** Splits a path into ustar `prefix` (≤ 155 bytes) and `name` (≤ 100 bytes) at a `/`. */
function splitName(path: string): [string, string] {
  if (Buffer.byteLength(path) <= 100) return ["", path];
  for (let i = path.indexOf("/"); i !== -1; i = path.indexOf("/", i + 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100 && name !== "")
      return [prefix, name];
  }
  throw new Error(`path too long for ustar: ${path}`);
}

/** Writes `value` as zero-padded octal filling `length - 1` digits plus a NUL terminator. */
function octal(h: Buffer, offset: number, length: number, value: number): void {
  const digits = value.toString(8);
  if (digits.length > length - 1) throw new Error(`value too large for tar header field: ${value}`);
  h.write(`${digits.padStart(length - 1, "0")}\0`, offset, length, "ascii");
}
