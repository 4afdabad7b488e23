import type { ListSlice, ListWindow } from "../core/list.js";
import type { CommonFilter } from "./common-filter.js";

/**
 * Signing keys an organization, folder or repo trusts (migration 0023, ADR 0056): validated SPKI
 * PEM public keys under a group or a repo (`parentUid`). Conventions are those of store.ts (times
 * in ms, undefined for missing).
 */
export interface TrustedKeyRow {
  /** `<parent uid>/<16 hex>`. */
  uid: string;
  /** The group or repo the key is registered at. */
  parentUid: string;
  /** The group-name rule; unique within the parent. */
  name: string;
  /** The normalised SPKI PEM (one `PUBLIC KEY` block, trailing newline). */
  publicKeyPem: string;
  /** `ECDSA_P256`, `ECDSA_P384`, `ED25519` or `RSA_<bits>`. */
  algorithm: string;
  /** Lower-case hex SHA-256 of the SPKI DER. */
  fingerprint: string;
  createTime: number;
}

export type TrustedKeyFilter = CommonFilter;

export interface TrustedKeyStore {
  get(uid: string): Promise<TrustedKeyRow | undefined>;
  list(filter: TrustedKeyFilter, window: ListWindow): Promise<ListSlice<TrustedKeyRow>>;
  /**
   * The keys whose parent is one of `parentUids` (a repo and its ancestors), in one indexed read,
   * nearest parent first (the longest uid), then oldest first (create time, then uid).
   */
  ofParents(parentUids: readonly string[]): Promise<TrustedKeyRow[]>;
  /** ALREADY_EXISTS when the parent has a key of the same name. */
  insert(row: TrustedKeyRow): Promise<void>;
  /** Deletes the key; false when it did not exist. (A deleted group's or repo's keys go with it.) */
  delete(uid: string): Promise<boolean>;
}
