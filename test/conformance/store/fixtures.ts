import assert from "node:assert/strict";
import { Code } from "@connectrpc/connect";
import { isDomainError } from "../../../src/core/errors.js";
import type { ListWindow, SortField } from "../../../src/core/list.js";
import { newChildUid, newRootUid, parentOf } from "../../../src/core/uidp.js";
import type { GroupRow, RoleRow } from "../../../src/storage/iam-store.js";
import type { RepoRow } from "../../../src/storage/registry-store.js";

/** A fixed base time (ms) so rows have predictable, distinct timestamps. */
export const T0 = 1_767_225_600_000;

/** The first page of `order` (default uid asc) with room for `limit` rows. */
export function firstPage(limit = 100, field: SortField = "uid", desc = false): ListWindow {
  return { order: { field, desc }, limit, skip: 0 };
}

/** A group row under `parent` ("" for a root), with a fresh uid unless `uid` is given. */
export function groupRow(parent: string, name: string, uid?: string): GroupRow {
  return {
    uid: uid ?? (parent === "" ? newRootUid() : newChildUid(parent)),
    name,
    description: `group ${name}`,
    verified: false,
    createTime: T0,
    updateTime: T0,
  };
}

/** A repo row in `groupUid`. */
export function repoRow(groupUid: string, name: string, time = T0): RepoRow {
  return {
    uid: newChildUid(groupUid),
    groupUid,
    name,
    description: `repo ${name}`,
    readme: `# ${name}`,
    createTime: time,
    updateTime: time,
  };
}

/** A custom (not built-in) role row under `parent`. */
export function roleRow(parent: string, name: string, capabilities: number[]): RoleRow {
  return {
    uid: parent === "" ? newRootUid() : newChildUid(parent),
    name,
    description: `role ${name}`,
    capabilities,
    builtIn: false,
    createTime: T0,
    updateTime: T0,
  };
}

/** A uid whose parent is `parent` with a chosen 16-hex last segment (to place siblings precisely). */
export function childUid(parent: string, segment: string): string {
  assert.match(segment, /^[0-9a-f]{16}$/);
  const uid = `${parent}/${segment}`;
  assert.equal(parentOf(uid), parent);
  return uid;
}

/** Asserts that `promise` rejects with an ALREADY_EXISTS DomainError. */
export async function assertAlreadyExists(promise: Promise<unknown>): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(isDomainError(err), `expected a DomainError, got ${String(err)}`);
    assert.equal(err.code, Code.AlreadyExists);
    return true;
  });
}

/** Asserts that `promise` rejects with a DomainError of `code`. */
export async function assertDomainError(promise: Promise<unknown>, code: Code): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(isDomainError(err), `expected a DomainError, got ${String(err)}`);
    assert.equal(err.code, code);
    return true;
  });
}

/** The uids of `rows`, sorted (for order-insensitive comparisons). */
export function sortedUids(rows: readonly { uid: string }[]): string[] {
  return rows.map((r) => r.uid).sort();
}
