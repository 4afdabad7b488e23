import type { AccessScopes } from "../core/context.js";
import type { RepoListRow, TagRow } from "./registry-store.js";

/**
 * The search box's reads (ADR 0063): repos by image path, tags by name, images by digest prefix,
 * across every repo in the caller's scopes. Each kind is bounded by `limit`.
 */

/** What to look for. */
export interface SearchQuery {
  /** Matched as a case-insensitive substring of repo image paths and tag names; `%`, `_` and `\` are literal. */
  text: string;
  /** `sha256:` and 4-64 lowercase hex digits: images whose digest starts with it. Absent: no image search. */
  digestPrefix?: string;
  /** The most rows of each kind (1 or more). */
  limit: number;
  /** Only repos inside these subtrees (a repo is inside when a scope uid is an ancestor-or-self of its uid). */
  within: AccessScopes;
}

/** A repo found by its image path. */
export interface RepoHit {
  repo: RepoListRow;
  /** `<org>/<folders…>/<repo name>`. */
  path: string;
}

/** A tag found by its name. */
export interface TagHit {
  tag: TagRow;
  /** The image path of the tag's repo. */
  repoPath: string;
}

/** A manifest found by its digest prefix, in one repo. */
export interface ImageHit {
  digest: string;
  repoUid: string;
  repoPath: string;
  /** The repo's tags pointing at the digest, sorted by name. */
  tags: string[];
}

/** What a search found. */
export interface SearchHits {
  /** Ordered by path, then uid. */
  repos: RepoHit[];
  /** Ordered by repo path, then tag name; referrer tags (`sha256-<hex>…`) are left out. */
  tags: TagHit[];
  /** Ordered by digest, then repo path; empty without `digestPrefix`. */
  images: ImageHit[];
  /** True when some kind had more than `limit` matches. */
  truncated: boolean;
}

/** The search reads of the store. */
export interface SearchStore {
  search(query: SearchQuery): Promise<SearchHits>;
}
