import { createHash } from "node:crypto";
import { parentOf } from "../../core/uidp.js";
import { STORE_ID_SETTING } from "../../storage/blob-store-identity.js";
import {
  type BlobDriver,
  BlobNotFoundError,
  BlobSizeMismatchError,
} from "../../storage/blobs/blob-driver.js";
import { BLOB_STORE_ID_KEY, BLOBS_PREFIX, blobKey, parseBlobKey } from "../../storage/blobs/blob-layout.js";
import type { Store } from "../../storage/store.js";

/** How `checkIntegrity` runs. */
export interface IntegrityOptions {
  /** Also hash every referenced blob and compare with its digest (reads every byte). */
  deep: boolean;
  /**
   * Deletes the dangling tags through `deleteTag` (the domain's delete: tag history and a
   * `tag.deleted` event). Orphans are left to garbage collection, which finds them itself.
   */
  repair: boolean;
  /** The domain's tag delete (RegistryContent.deleteTag); needed with `repair`. */
  deleteTag?: (repoUid: string, name: string) => Promise<boolean>;
  /** Told as the check goes (one line per phase, and every 1,000 blobs). */
  onProgress?: (line: string) => void;
  /**
   * Whether the repository at `path` is a pull-through cache's (ADR 0052): its manifests are
   * recorded before their blobs, which are fetched when first pulled, so a blob only such repos
   * reference and nobody has pulled yet (no blob row) is counted in `notFetchedBlobs`, not damage.
   */
  cachedRepository?: (path: string) => Promise<boolean>;
}

/** A blob that manifests reference and blob storage cannot give as recorded. */
export interface DamagedBlob {
  digest: string;
  /**
   * `missing`: no object in blob storage; `size`: an object of another size; `digest`: the bytes
   * hash to another digest (`--deep`); `unrecorded`: manifests reference it but no blob row exists.
   */
  problem: "missing" | "size" | "digest" | "unrecorded";
  recordedSize?: number;
  storedSize?: number;
  actualDigest?: string;
  /** The images it breaks: `repo/path:tag (digest)`, or `repo/path@digest` for untagged manifests. */
  images: string[];
}

/** A tag whose manifest is not in its repo. */
export interface DanglingTag {
  /** `repo/path:tag`. */
  image: string;
  digest: string;
  /** Whether `--repair` deleted it. */
  repaired: boolean;
}

/** Everything `wharf fsck` found. */
export interface IntegrityReport {
  /** The store ids (ADR 0016): the database's and the blob store's stamp; `match` false is damage. */
  storeIds: { database: string | undefined; blobStore: string | undefined; match: boolean };
  /** Distinct blobs manifests reference, checked. */
  checkedBlobs: number;
  /** Of those, blobs only pull-through caches reference that were never pulled (no damage; ADR 0052). */
  notFetchedBlobs: number;
  deep: boolean;
  damagedBlobs: DamagedBlob[];
  danglingTags: DanglingTag[];
  /** Not damage: blob rows no manifest references, and blob files with no row (GC removes both). */
  orphans: {
    unreferencedBlobs: number;
    strayFiles: number;
    /** The first {@link LISTED_ORPHANS} of each, by digest or key. */
    examples: { unreferencedBlobs: string[]; strayFiles: string[] };
  };
  /** True when anything but orphans is wrong (after repairs: repaired tags no longer count). */
  damaged: boolean;
}

const PAGE = 500;
/** How many orphans of each kind the report names (all are counted). */
export const LISTED_ORPHANS = 100;
/** How many levels of indexes above a damaged manifest the image names follow. */
const INDEX_DEPTH = 4;

/**
 * Checks the registry's metadata against its blob storage, reading both while servers run:
 *
 * - the store ids of the database and the blob store match (ADR 0016);
 * - every blob a manifest references has a blob row and an object of the recorded size
 *   (`deep`: whose bytes hash to its digest). An object found missing is re-read in the metadata
 *   first: when its row is gone, garbage collection removed it meanwhile, which is no damage;
 * - every tag names a manifest of its repo.
 *
 * Each damaged blob is reported with the images it breaks (the manifests referencing it, the
 * indexes above those, and the tags naming any of them). Orphans are counted and listed, never
 * damage. With `repair`, dangling tags are deleted through `deleteTag` (unless the store ids
 * differ: then nothing is changed); referenced data is never deleted.
 */
export async function checkIntegrity(
  deps: { store: Store; blobs: BlobDriver },
  options: IntegrityOptions,
): Promise<IntegrityReport> {
  const { store, blobs } = deps;
  const say = options.onProgress ?? (() => {});
  const paths = repoPaths(store);

  const storeIds = await compareStoreIds(store, blobs);
  say(`store ids: database ${storeIds.database ?? "none"}, blob store ${storeIds.blobStore ?? "none"}`);

  const damagedBlobs: DamagedBlob[] = [];
  let checkedBlobs = 0;
  let notFetchedBlobs = 0;
  for (let after: string | undefined; ; ) {
    const page = await store.integrity.referencedBlobPage(after, PAGE);
    for (const ref of page) {
      const problem = await checkBlob(store, blobs, ref.digest, ref.size, options.deep);
      checkedBlobs++;
      if (checkedBlobs % 1000 === 0) say(`blobs: ${checkedBlobs} checked, ${damagedBlobs.length} damaged`);
      if (problem?.problem === "unrecorded" && (await onlyCached(store, paths, ref.digest, options))) {
        notFetchedBlobs++;
      } else if (problem !== undefined)
        damagedBlobs.push({ ...problem, images: await imagesOf(store, paths, ref.digest) });
    }
    if (page.length < PAGE) break;
    after = page.at(-1)?.digest;
  }
  say(`blobs: ${checkedBlobs} checked${options.deep ? " and hashed" : ""}, ${damagedBlobs.length} damaged`);

  const danglingTags: DanglingTag[] = [];
  const repair = options.repair && storeIds.match;
  for (let after: string | undefined; ; ) {
    const page = await store.integrity.danglingTagPage(after, PAGE);
    for (const tag of page) {
      const image = `${await paths.of(tag.repoUid)}:${tag.name}`;
      let repaired = false;
      if (repair) {
        if (options.deleteTag === undefined) throw new Error("checkIntegrity: repair needs deleteTag");
        repaired = await options.deleteTag(tag.repoUid, tag.name);
      }
      danglingTags.push({ image, digest: tag.digest, repaired });
    }
    if (page.length < PAGE) break;
    after = page.at(-1)?.uid;
  }
  say(
    `tags: ${danglingTags.length} dangling${repair ? `, ${danglingTags.filter((t) => t.repaired).length} deleted` : ""}`,
  );

  const orphans = await findOrphans(store, blobs);
  say(`orphans: ${orphans.unreferencedBlobs} unreferenced blobs, ${orphans.strayFiles} files with no row`);

  return {
    storeIds,
    checkedBlobs,
    notFetchedBlobs,
    deep: options.deep,
    damagedBlobs,
    danglingTags,
    orphans,
    damaged: !storeIds.match || damagedBlobs.length > 0 || danglingTags.some((t) => !t.repaired),
  };
}

async function compareStoreIds(store: Store, blobs: BlobDriver): Promise<IntegrityReport["storeIds"]> {
  const database = await store.settings.get(STORE_ID_SETTING);
  let blobStore: string | undefined;
  if ((await blobs.stat(BLOB_STORE_ID_KEY)) !== undefined) {
    const chunks: Buffer[] = [];
    for await (const chunk of await blobs.read(BLOB_STORE_ID_KEY, { start: 0, end: 1024 }))
      chunks.push(chunk as Buffer);
    blobStore = Buffer.concat(chunks).toString("utf8").trim();
  }
  return { database, blobStore, match: database === blobStore };
}

/** What is wrong with referenced blob `digest` (recorded `size`), or undefined when nothing is. */
async function checkBlob(
  store: Store,
  blobs: BlobDriver,
  digest: string,
  size: number | undefined,
  deep: boolean,
): Promise<Omit<DamagedBlob, "images"> | undefined> {
  if (size === undefined) return { digest, problem: "unrecorded" };
  const key = keyOf(digest);
  if (key === undefined) return { digest, problem: "unrecorded" };
  const gone = async () =>
    // Re-read: garbage collection may have removed the blob (row first, then bytes) meanwhile.
    (await store.blobs.get(digest)) === undefined
      ? undefined
      : ({ digest, problem: "missing", recordedSize: size } as const);
  const stat = await blobs.stat(key);
  if (stat === undefined) return gone();
  if (stat.size !== size) return { digest, problem: "size", recordedSize: size, storedSize: stat.size };
  if (!deep) return undefined;
  const algorithm = digest.slice(0, digest.indexOf(":"));
  const hash = createHash(algorithm);
  try {
    for await (const chunk of await blobs.read(key, undefined, { size })) hash.update(chunk as Buffer);
  } catch (err) {
    if (err instanceof BlobNotFoundError) return gone();
    if (err instanceof BlobSizeMismatchError)
      return { digest, problem: "size", recordedSize: size, storedSize: err.storedSize };
    throw err;
  }
  const actual = `${algorithm}:${hash.digest("hex")}`;
  return actual === digest
    ? undefined
    : { digest, problem: "digest", recordedSize: size, actualDigest: actual };
}

/** Whether every manifest referencing `digest` is in a pull-through cache's repository. */
async function onlyCached(
  store: Store,
  paths: RepoPaths,
  digest: string,
  options: IntegrityOptions,
): Promise<boolean> {
  const cached = options.cachedRepository;
  if (cached === undefined) return false;
  const referencing = await store.integrity.referencingManifests(digest);
  for (const m of referencing) if (!(await cached(await paths.of(m.repoUid)))) return false;
  return referencing.length > 0;
}

/** The blob key of `digest`, or undefined for a digest the blob layout cannot address. */
function keyOf(digest: string): string | undefined {
  const match = /^([a-z0-9]+):([0-9a-f]{2,})$/.exec(digest);
  return match ? blobKey({ algorithm: match[1] as string, hex: match[2] as string }) : undefined;
}

/**
 * The images a damaged blob breaks: every manifest referencing it, every index above those (in the
 * same repo, up to {@link INDEX_DEPTH} levels), each named by its tags (`path:tag (digest)`) or,
 * untagged, as `path@digest`. Sorted, without repeats.
 */
async function imagesOf(store: Store, paths: RepoPaths, digest: string): Promise<string[]> {
  const names = new Set<string>();
  const seen = new Set<string>();
  let level = await store.integrity.referencingManifests(digest);
  for (let depth = 0; depth <= INDEX_DEPTH && level.length > 0; depth++) {
    const next: typeof level = [];
    for (const m of level) {
      const id = `${m.repoUid} ${m.digest}`;
      if (seen.has(id)) continue;
      seen.add(id);
      const path = await paths.of(m.repoUid);
      const tags = await store.tags.list(
        { uidp: { childrenOf: m.repoUid }, digest: m.digest },
        { order: { field: "uid", desc: false }, limit: 1000, skip: 0 },
      );
      if (tags.rows.length === 0) names.add(`${path}@${m.digest}`);
      for (const tag of tags.rows) names.add(`${path}:${tag.name} (${m.digest})`);
      next.push(...(await store.integrity.referencingManifests(m.digest, m.repoUid)));
    }
    level = next;
  }
  return [...names].sort();
}

interface RepoPaths {
  /** The registry path of repo `uid` (`org/group/…/repo`), or the uid when the repo is gone. */
  of(uid: string): Promise<string>;
}

/** Registry paths of repos from the group tree, cached per run. */
function repoPaths(store: Store): RepoPaths {
  const groups = new Map<string, string>();
  const repos = new Map<string, string>();
  const groupPath = async (uid: string): Promise<string> => {
    if (uid === "") return "";
    const known = groups.get(uid);
    if (known !== undefined) return known;
    const row = await store.groups.get(uid);
    const parent = await groupPath(parentOf(uid));
    const path = `${parent === "" ? "" : `${parent}/`}${row?.name ?? uid}`;
    groups.set(uid, path);
    return path;
  };
  return {
    async of(uid) {
      const known = repos.get(uid);
      if (known !== undefined) return known;
      const row = await store.repos.get(uid);
      const path = row === undefined ? uid : `${await groupPath(row.groupUid)}/${row.name}`;
      repos.set(uid, path);
      return path;
    },
  };
}

/**
 * Counts (and names the first of) blob rows no manifest references, and blob files with no row:
 * a merge of the blob rows and the listing of `blobs/`, both in digest order (the blob layout's
 * keys sort as their digests do).
 */
async function findOrphans(store: Store, blobs: BlobDriver): Promise<IntegrityReport["orphans"]> {
  const orphans: IntegrityReport["orphans"] = {
    unreferencedBlobs: 0,
    strayFiles: 0,
    examples: { unreferencedBlobs: [], strayFiles: [] },
  };
  for (let after: string | undefined; ; ) {
    const page = await store.integrity.unreferencedBlobPage(after, PAGE);
    for (const row of page) {
      orphans.unreferencedBlobs++;
      if (orphans.examples.unreferencedBlobs.length < LISTED_ORPHANS)
        orphans.examples.unreferencedBlobs.push(row.digest);
    }
    if (page.length < PAGE) break;
    after = page.at(-1)?.digest;
  }
  const rows = rowDigests(store);
  let row = await rows.next();
  for await (const object of blobs.list(BLOBS_PREFIX)) {
    const address = parseBlobKey(object.key);
    if (address === undefined) continue;
    const digest = `${address.algorithm}:${address.hex}`;
    while (!row.done && row.value < digest) row = await rows.next();
    if (!row.done && row.value === digest) continue;
    // Listed but not (yet) recorded: a push between its bytes and its row, or a stray; re-read.
    if ((await store.blobs.get(digest)) !== undefined) continue;
    orphans.strayFiles++;
    if (orphans.examples.strayFiles.length < LISTED_ORPHANS) orphans.examples.strayFiles.push(object.key);
  }
  return orphans;
}

/** Every blob row's digest, in digest order, page by page. */
async function* rowDigests(store: Store): AsyncGenerator<string> {
  for (let after: string | undefined; ; ) {
    const page = await store.integrity.blobPage(after, PAGE);
    for (const row of page) yield row.digest;
    if (page.length < PAGE) return;
    after = page.at(-1)?.digest;
  }
}
