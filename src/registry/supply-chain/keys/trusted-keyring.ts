import { type Clock, systemClock } from "../../../core/clock.js";
import { selfAndAncestors } from "../../../core/uidp.js";
import { type ChangeFeed, touches } from "../../../storage/change-feed.js";
import type { Store } from "../../../storage/store.js";
import type { TrustedKey, TrustedKeyring } from "../supply-chain.js";

/** The keyring as the composition root holds it: `close` stops following the change feed. */
export interface TrustedKeyringHandle extends TrustedKeyring {
  close(): void;
}

/**
 * The tables whose changes may change an answer: the keys, and groups and repos (renamed, so the
 * `parentPath` changes, or deleted, taking their keys).
 */
export const TRUSTED_KEYRING_TABLES = ["trusted_keys", "groups", "repos"] as const;

/** Safety net for a lost change notification: an answer is read again after this long. */
const DEFAULT_TTL_MS = 30_000;
/** Most repos whose keys are held; past it the cache starts over (keys are few, repos many). */
const DEFAULT_MAX_REPOS = 10_000;

interface Entry {
  keys: Promise<readonly TrustedKey[]>;
  expires: number;
}

/**
 * Creates the keyring (TrustedKeyring of supply-chain.ts). `keysFor(repo)` reads the keys at the
 * repo and its ancestor groups in one indexed query (plus the group names of their paths when there
 * are keys) and caches the answer per repo. Every cached answer is dropped when the change feed
 * reports a write to `trusted_keys`, `groups` or `repos` (here or, on PostgreSQL, by any other
 * process), and after `ttlMs` in any case. A repo that does not exist has no keys.
 */
export function createTrustedKeyring(deps: {
  store: Pick<Store, "trustedKeys" | "groups" | "repos">;
  changes: ChangeFeed;
  clock?: Clock;
  ttlMs?: number;
  maxRepos?: number;
}): TrustedKeyringHandle {
  const { store } = deps;
  const clock = deps.clock ?? systemClock;
  const ttlMs = deps.ttlMs ?? DEFAULT_TTL_MS;
  const maxRepos = deps.maxRepos ?? DEFAULT_MAX_REPOS;
  let cache = new Map<string, Entry>();
  // Bumped on every change: a read that began before it may predate it, so is not kept.
  let generation = 0;

  const unsubscribe = deps.changes.subscribe((batch) => {
    if (touches(batch, TRUSTED_KEYRING_TABLES)) {
      generation++;
      cache = new Map();
    }
  });

  async function load(repoUid: string, entry: Entry): Promise<readonly TrustedKey[]> {
    const started = generation;
    try {
      const keys = await read(repoUid);
      if (started !== generation) entry.expires = 0;
      return keys;
    } catch (err) {
      entry.expires = 0;
      throw err;
    }
  }

  async function read(repoUid: string): Promise<readonly TrustedKey[]> {
    const parents = selfAndAncestors(repoUid);
    const rows = await store.trustedKeys.ofParents(parents);
    if (rows.length === 0) return [];
    const repo = await store.repos.get(repoUid);
    if (!repo) return [];
    const groupUids = parents.slice(0, -1);
    const names = new Map((await store.groups.getMany(groupUids)).map((g) => [g.uid, g.name]));
    const pathOf = (uid: string) => {
      const groups = selfAndAncestors(uid === repoUid ? repo.groupUid : uid).map((g) => names.get(g) ?? "?");
      return (uid === repoUid ? [...groups, repo.name] : groups).join("/");
    };
    return rows.map((row) =>
      Object.freeze({
        uid: row.uid,
        name: row.name,
        parentUid: row.parentUid,
        parentPath: pathOf(row.parentUid),
        publicKeyPem: row.publicKeyPem,
        createTime: row.createTime,
      }),
    );
  }

  return {
    async keysFor(repoUid) {
      const now = clock.now();
      const held = cache.get(repoUid);
      if (held && held.expires > now) return [...(await held.keys)];
      if (cache.size >= maxRepos) cache = new Map();
      const entry: Entry = { keys: Promise.resolve([]), expires: now + ttlMs };
      entry.keys = load(repoUid, entry);
      cache.set(repoUid, entry);
      return [...(await entry.keys)];
    },
    close: unsubscribe,
  };
}
