import type { ListSlice, ListWindow } from "../core/list.js";
import type { CommonFilter } from "./common-filter.js";

/**
 * Upstreams of the pull-through cache (migration 0021, ADR 0051): registries an organization
 * mirrors under `<org>/<name>/…`. Conventions are those of store.ts (times in ms, undefined for
 * missing).
 */
export interface UpstreamRow {
  /** `<organization uid>/<16 hex>`. */
  uid: string;
  /** The organization (a top-level group) the upstream is under. */
  orgUid: string;
  /** One path component, unique within the organization. */
  name: string;
  /** `https://host[:port][/prefix]`, normalised. */
  url: string;
  /** "" when anonymous. */
  username: string;
  /** The password as SecretBox.seal made it; "" when none. Never leaves the server. */
  passwordSealed: string;
  /** How long a cached tag is served before the upstream is asked again. */
  tagTtlMs: number;
  createTime: number;
  updateTime: number;
}

/** An upstream with its organization's name, as the upstream directory loads them. */
export interface UpstreamWithOrg extends UpstreamRow {
  orgName: string;
}

export type UpstreamFilter = CommonFilter;

export interface UpstreamStore {
  get(uid: string): Promise<UpstreamRow | undefined>;
  /** The upstream of organization `orgUid` named `name`. */
  getByName(orgUid: string, name: string): Promise<UpstreamRow | undefined>;
  list(filter: UpstreamFilter, window: ListWindow): Promise<ListSlice<UpstreamRow>>;
  /** Every upstream with its organization's name, in one read (the directory's whole table). */
  all(): Promise<UpstreamWithOrg[]>;
  /** ALREADY_EXISTS when the organization has an upstream of the same name. */
  insert(row: UpstreamRow): Promise<void>;
  /**
   * Writes url, username, passwordSealed, tagTtlMs and updateTime (name and organization never
   * change); false when the upstream does not exist.
   */
  update(row: UpstreamRow): Promise<boolean>;
  /** Deletes the upstream; false when it did not exist. (A deleted organization's go with it.) */
  delete(uid: string): Promise<boolean>;
}
