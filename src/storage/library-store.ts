import type { ListSlice, ListWindow } from "../core/list.js";

/**
 * The library catalogue (`wharf import libraries`, ArtifactsService): versions as imported, and
 * one row per artifact aggregated from its versions by the importer. The data is global (no
 * organization owns it). Times are milliseconds since the Unix epoch.
 */

/** Ecosystem of a library, as stored: the enum name without its `ECOSYSTEM_` prefix. */
export type LibraryEcosystemName = "JAVA" | "PYTHON" | "JAVASCRIPT";

/** One published version of an artifact. */
export interface LibraryVersionRow {
  /** `<artifact uid>/<16 hex>`. */
  uid: string;
  artifactUid: string;
  version: string;
  description: string;
  publishTime: number;
  sizeBytes: bigint;
  remediated: boolean;
  /** CUDA version of a PyPI build (`12.1` for `+cu121`), "" when none. */
  cudaVersion: string;
  /**
   * Position of the version among its artifact's versions in the ecosystem's order (0 = oldest);
   * set by `setVersionRanks`, 0 until then.
   */
  rank: number;
}

/** An artifact with the aggregate of its versions. */
export interface LibraryArtifactRow {
  /** 40 hex, derived from ecosystem and name. */
  uid: string;
  ecosystem: LibraryEcosystemName;
  name: string;
  /** Description of the latest version. */
  description: string;
  latestVersion: string;
  versionCount: number;
  /** Versions that are remediated builds. */
  remediatedCount: number;
  /** Publish time of the first version. */
  createTime: number;
  /** Publish time of the latest-published version. */
  updateTime: number;
}

/** Filter of `listArtifacts`; every set field narrows the list (AND). */
export interface LibraryArtifactFilter {
  /** Required; an empty list matches nothing. */
  ecosystems: readonly LibraryEcosystemName[];
  /** Case-insensitive substring of the name ("" or absent: any). */
  query?: string;
  /** Only artifacts with a remediated version. */
  remediated?: boolean;
  /** Only artifacts with a version of this CUDA version (`LibraryVersionRow.cudaVersion`). */
  cudaVersion?: string;
}

/** What `putVersion` did. */
export type PutOutcome = "created" | "updated" | "unchanged";

export interface LibraryStore {
  getArtifact(uid: string): Promise<LibraryArtifactRow | undefined>;
  /**
   * Inserts the artifact or replaces its columns (uid is the key; ecosystem and name never change
   * for a uid).
   */
  putArtifact(row: LibraryArtifactRow): Promise<void>;
  /**
   * Inserts the version, or updates it when a field other than `rank` differs (the rank is kept);
   * `unchanged` when it is stored exactly so. The artifact row must exist (foreign key).
   */
  putVersion(row: LibraryVersionRow): Promise<PutOutcome>;
  /** Every version of the artifact, in no particular order. */
  versionsOf(artifactUid: string): Promise<LibraryVersionRow[]>;
  /** Sets the rank of each listed version (rows of other artifacts are not touched). */
  setVersionRanks(ranks: ReadonlyArray<{ uid: string; rank: number }>): Promise<void>;
  /** Sort fields: name (byte order), uid, create_time, update_time. */
  listArtifacts(filter: LibraryArtifactFilter, window: ListWindow): Promise<ListSlice<LibraryArtifactRow>>;
  /** Sort fields: version (rank), create_time (publish time), uid. */
  listVersions(artifactUid: string, window: ListWindow): Promise<ListSlice<LibraryVersionRow>>;
  /** Artifacts per ecosystem, for the named ecosystems (absent ones count 0). */
  countArtifacts(ecosystems: readonly LibraryEcosystemName[]): Promise<Map<LibraryEcosystemName, number>>;
}
