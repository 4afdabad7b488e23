import { createHash } from "node:crypto";
import { deterministicRootUid } from "../core/uidp.js";
import type { LibraryEcosystemName } from "../storage/library-store.js";

/**
 * The uid of the artifact `name` of `ecosystem`: 40 hex, sha1 of `wharf:library:<ECOSYSTEM>:<name>`,
 * so every install (and every re-import) gives an artifact the same uid.
 */
export function artifactUid(ecosystem: LibraryEcosystemName, name: string): string {
  return deterministicRootUid(`wharf:library:${ecosystem}:${name}`);
}

/** The uid of one version of an artifact: `<artifact uid>/<first 16 hex of sha1(version)>`. */
export function versionUid(artifact: string, version: string): string {
  return `${artifact}/${createHash("sha1").update(version).digest("hex").slice(0, 16)}`;
}
