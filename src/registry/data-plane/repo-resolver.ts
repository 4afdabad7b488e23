import { Code } from "@connectrpc/connect";
import type { Clock } from "../../core/clock.js";
import type { Principal } from "../../core/context.js";
import { isDomainError } from "../../core/errors.js";
import type { EventRecorder } from "../../events/event-recorder.js";
import { createGroupIn, newGroupRow, validateNewGroup } from "../../iam/group-creation.js";
import type { RepoRow } from "../../storage/registry-store.js";
import type { Store } from "../../storage/store.js";
import { withRepoRefusalRecorded } from "../quotas/repo-quota.js";
import { quotaEventSink } from "../quotas/storage-quota.js";
import { createRepoIn, newRepoRow, validateNewRepo } from "../repo-creation.js";

/**
 * An image path `<org>/<subgroups…>/<repo>` resolved against the group tree: how far it exists.
 */
export interface ResolvedName {
  name: string;
  /** Uids of the groups of the path that exist, the organization first. */
  groups: string[];
  /** Path components after the existing groups that have no group yet (the repo name excluded). */
  missingGroups: string[];
  repoName: string;
  /** The repo, when the whole path exists. */
  repo: RepoRow | undefined;
  /**
   * Where capabilities for this path are checked: the repo uid, else the deepest existing group;
   * undefined when not even the organization exists.
   */
  scope: string | undefined;
}

/** Maps image paths to repos through group names, creating what a push needs. */
export interface RepoResolver {
  /** Resolves `name` (a valid repository name). Full resolutions are cached for `ttlMs`. */
  resolve(name: string): Promise<ResolvedName>;
  /**
   * The repo of `resolved`, creating the missing subgroups and the repo (one transaction) when it
   * does not exist. The organization must exist (callers check `scope` first). A concurrent push
   * creating the same path is tolerated: the existing rows are used. Each group and repo created
   * is an event (`group.created`, `repo.created`) by `principal`, in the same transaction: rows,
   * validation and events come from the API's create code (createGroupIn, createRepoIn). A name to
   * create that breaks the group or repo name rule (src/core/registry-name.ts; e.g. a group name
   * over 63 characters) is INVALID_ARGUMENT on `name`, and nothing is created.
   */
  ensureRepo(resolved: ResolvedName, principal: Principal | undefined): Promise<RepoRow>;
  /** Forgets cached resolutions (a repo or group was deleted or renamed, here or elsewhere). */
  forget(): void;
}

/** Creates the resolver; `ttlMs` (default 1000) bounds how long another process's delete goes unseen. */
export function createRepoResolver(opts: {
  store: Store;
  clock: Clock;
  events: EventRecorder;
  ttlMs?: number;
}): RepoResolver {
  const { store, clock } = opts;
  const ttlMs = opts.ttlMs ?? 1000;
  const cache = new Map<string, { resolved: ResolvedName; expires: number }>();
  // Bumped by `forget`: a resolution that started before it may predate the change, so is not kept.
  let forgets = 0;

  async function resolveUncached(name: string): Promise<ResolvedName> {
    const parts = name.split("/");
    const repoName = parts.pop() as string;
    const groups: string[] = [];
    let parent = "";
    let i = 0;
    for (; i < parts.length; i++) {
      const group = await store.groups.getByName(parent, parts[i] as string);
      if (!group) break;
      groups.push(group.uid);
      parent = group.uid;
    }
    const missingGroups = parts.slice(i);
    const repo =
      missingGroups.length === 0 && parent !== "" ? await store.repos.getByName(parent, repoName) : undefined;
    return {
      name,
      groups,
      missingGroups,
      repoName,
      repo,
      scope: repo?.uid ?? (parent === "" ? undefined : parent),
    };
  }

  async function resolve(name: string): Promise<ResolvedName> {
    const now = clock.now();
    const hit = cache.get(name);
    if (hit && hit.expires > now) return hit.resolved;
    const forgetsBefore = forgets;
    const resolved = await resolveUncached(name);
    if (resolved.repo && forgets === forgetsBefore) {
      if (cache.size >= 10_000) cache.clear();
      cache.set(name, { resolved, expires: now + ttlMs });
    } else cache.delete(name);
    return resolved;
  }

  async function create(resolved: ResolvedName, principal: Principal | undefined): Promise<RepoRow> {
    const now = clock.now();
    const ctx = { principal, clock };
    return store.transaction(async (tx) => {
      let parent = resolved.groups.at(-1) as string;
      for (const name of resolved.missingGroups) {
        const existing = await tx.groups.getByName(parent, name);
        if (existing) {
          parent = existing.uid;
          continue;
        }
        const group = newGroupRow(parent, name, "", now);
        await createGroupIn(tx, opts, ctx, group, parent);
        parent = group.uid;
      }
      const existing = await tx.repos.getByName(parent, resolved.repoName);
      if (existing) return existing;
      const repo = newRepoRow(parent, resolved.repoName, "", now);
      await createRepoIn(tx, opts, ctx, repo);
      return repo;
    });
  }

  return {
    resolve,
    async ensureRepo(resolved, principal) {
      if (resolved.repo) return resolved.repo;
      if (resolved.groups.length === 0) throw new Error("ensureRepo: the organization does not exist");
      requireCreatableNames(resolved);
      try {
        return await withRepoRefusalRecorded(
          store,
          quotaEventSink(opts.events, { principal, clock }),
          { groupUid: resolved.groups[0] as string, repository: resolved.name },
          () => create(resolved, principal),
        );
      } catch (err) {
        // Another process created a row of the path between our read and our insert: use theirs.
        if (!isDomainError(err) || err.code !== Code.AlreadyExists) throw err;
        const again = await resolveUncached(resolved.name);
        if (again.repo) return again.repo;
        return create(again, principal);
      }
    },
    forget: () => {
      forgets++;
      cache.clear();
    },
  };
}

/**
 * Throws INVALID_ARGUMENT on `name` unless every group and the repo that a push to `resolved` would
 * create passes the API's CreateGroup and CreateRepo validation (validateNewGroup, validateNewRepo):
 * the path grammar is checked on every request, the lengths of group and repo names here.
 */
function requireCreatableNames(resolved: ResolvedName): void {
  for (const group of resolved.missingGroups)
    validateNewGroup(group, "", `group name "${group.slice(0, 80)}"`);
  validateNewRepo(resolved.repoName, "", `repo name "${resolved.repoName.slice(0, 80)}"`);
}
