import { createHash, randomBytes } from "node:crypto";
import { invalidArgument } from "./errors.js";

/** Root uid: 40 lowercase hex. Child: parent + "/" + 16 hex. */
export const UIDP_PATTERN = /^[0-9a-f]{40}(?:\/[0-9a-f]{16})*$/;

/** A new root uid (organization, registered identity): 20 random bytes as hex. */
export function newRootUid(): string {
  return randomBytes(20).toString("hex");
}

/** A new child uidp under `parent`: parent + "/" + 8 random bytes as hex. */
export function newChildUid(parent: string): string {
  return `${parent}/${randomBytes(8).toString("hex")}`;
}

/** A deterministic root uid: sha1 hex of `seed` (built-in roles, registered people). */
export function deterministicRootUid(seed: string): string {
  return createHash("sha1").update(seed).digest("hex");
}

/** True when `uid` is a syntactically valid uidp. */
export function isUidp(uid: string): boolean {
  return UIDP_PATTERN.test(uid);
}

/**
 * Returns `uid` when it is a valid uidp; throws INVALID_ARGUMENT naming `field` otherwise
 * (empty included).
 */
export function requireUidp(field: string, uid: string): string {
  if (!isUidp(uid)) {
    throw invalidArgument(field, uid === "" ? "is required" : `"${uid}" is not a valid uid`);
  }
  return uid;
}

/** The parent uidp, or "" for a root uid. */
export function parentOf(uid: string): string {
  const i = uid.lastIndexOf("/");
  return i < 0 ? "" : uid.slice(0, i);
}

/** The root (organization) uid of a uidp. */
export function rootOf(uid: string): string {
  const i = uid.indexOf("/");
  return i < 0 ? uid : uid.slice(0, i);
}

/** True when `ancestor` equals `uid` or is one of its ancestors. */
export function isAncestorOrSelf(ancestor: string, uid: string): boolean {
  return uid === ancestor || uid.startsWith(`${ancestor}/`);
}

/** `uid` and all its ancestors, the root first. */
export function selfAndAncestors(uid: string): string[] {
  const parts = uid.split("/");
  const out: string[] = [];
  for (let i = 1; i <= parts.length; i++) out.push(parts.slice(0, i).join("/"));
  return out;
}

/** True for a root-level uid (no parent). */
export function isRoot(uid: string): boolean {
  return !uid.includes("/");
}
