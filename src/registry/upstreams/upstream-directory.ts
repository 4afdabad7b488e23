/**
 * How the registry finds the upstream a repository name falls under (issue 36): the contract
 * between the Upstream resource (upstreams-service, its store) and the pull-through cache.
 * Implemented by `createUpstreamDirectory`.
 */

import type { Clock } from "../../core/clock.js";
import type { SecretBox } from "../../core/secret-box.js";
import { touches } from "../../storage/change-feed.js";
import type { Store } from "../../storage/store.js";
import type { UpstreamWithOrg } from "../../storage/upstream-store.js";

/** An upstream as the cache uses it, its password opened. */
export interface UpstreamConfig {
  uid: string;
  /** The organization's uid (the upstream's parent). */
  orgUid: string;
  orgName: string;
  /** The upstream's name: the path component below the organization that stands for it. */
  name: string;
  /** `https://host[:port][/prefix]`, as the API stored it. */
  url: string;
  /** "" when anonymous. */
  username: string;
  /** "" when anonymous; opened from its sealed form. Never log it. */
  password: string;
  /** How long a tag's cached digest is served before one HEAD checks it again (default 10 min). */
  tagTtlMs: number;
  /** Changes when the upstream is updated (clients built from an older one are dropped). */
  updateTime: number;
}

/** A repository name resolved to its upstream: `<org>/<upstream name>/<path>` → `path` at the upstream. */
export interface UpstreamTarget {
  upstream: UpstreamConfig;
  /** The repository at the upstream (below the URL's prefix), e.g. `library/alpine`. */
  path: string;
}

/** Finds upstreams by repository name; answers from a cache that follows the store's change feed. */
export interface UpstreamDirectory {
  /**
   * The upstream `repository` (a full registry name, `acme/hub/library/alpine`) falls under, or
   * undefined when its first two components are not an organization and one of its upstreams.
   * A name equal to `<org>/<upstream>` (no path) is undefined.
   */
  lookup(repository: string): Promise<UpstreamTarget | undefined>;
  /** The upstream `<org>/<name>` (e.g. for `--mirror-upstream docker.io=acme/hub`), or undefined. */
  byName(orgName: string, upstreamName: string): Promise<UpstreamConfig | undefined>;
}

/** The directory as the composition root holds it: `close` stops following the change feed. */
export interface UpstreamDirectoryHandle extends UpstreamDirectory {
  close(): void;
}

/** The tables whose changes may change an answer: upstreams, and groups (an organization renamed or deleted). */
export const UPSTREAM_DIRECTORY_TABLES = ["upstreams", "groups"] as const;

/** Default safety net for a lost change notification: the table is read again after this long. */
const DEFAULT_TTL_MS = 30_000;

interface Snapshot {
  /** `<org name>/<upstream name>` → the row and its opened config (opened on first use). */
  byKey: Map<string, { row: UpstreamWithOrg; config?: Promise<UpstreamConfig> }>;
  expires: number;
}

/**
 * Creates the directory. It holds the whole `upstreams` table (small: a few per organization) as
 * one snapshot read with a single query, so the lookup every registry request makes is a map read
 * and never a database query for names that are not upstreams. The snapshot is dropped when the
 * store's change feed reports a write to `upstreams` or `groups` (here or, on PostgreSQL, on any
 * replica), and after `ttlMs` in any case. Passwords are opened on first use of each upstream.
 */
export function createUpstreamDirectory(deps: {
  store: Pick<Store, "upstreams" | "changes">;
  secrets: SecretBox;
  clock: Clock;
  ttlMs?: number;
}): UpstreamDirectoryHandle {
  const { store, secrets, clock } = deps;
  const ttlMs = deps.ttlMs ?? DEFAULT_TTL_MS;
  let current: Promise<Snapshot> | undefined;
  // Bumped on every change: a snapshot read that began before it may predate it, so is not kept.
  let generation = 0;

  const unsubscribe = store.changes.subscribe((batch) => {
    if (touches(batch, UPSTREAM_DIRECTORY_TABLES)) {
      generation++;
      current = undefined;
    }
  });

  async function load(): Promise<Snapshot> {
    const started = generation;
    const rows = await store.upstreams.all();
    const byKey = new Map<string, { row: UpstreamWithOrg }>();
    for (const row of rows) byKey.set(`${row.orgName}/${row.name}`, { row });
    const snapshot: Snapshot = { byKey, expires: clock.now() + ttlMs };
    if (started !== generation) snapshot.expires = 0;
    return snapshot;
  }

  async function snapshot(): Promise<Snapshot> {
    const held = current;
    if (held) {
      const s = await held;
      if (s.expires > clock.now()) return s;
      if (current === held) current = undefined;
    }
    const loading = load();
    current = loading;
    loading.catch(() => {
      if (current === loading) current = undefined;
    });
    return loading;
  }

  async function configOf(orgName: string, name: string): Promise<UpstreamConfig | undefined> {
    const entry = (await snapshot()).byKey.get(`${orgName}/${name}`);
    if (!entry) return undefined;
    entry.config ??= openConfig(entry.row);
    return entry.config;
  }

  async function openConfig(row: UpstreamWithOrg): Promise<UpstreamConfig> {
    return {
      uid: row.uid,
      orgUid: row.orgUid,
      orgName: row.orgName,
      name: row.name,
      url: row.url,
      username: row.username,
      password: await secrets.open(row.passwordSealed),
      tagTtlMs: row.tagTtlMs,
      updateTime: row.updateTime,
    };
  }

  return {
    async lookup(repository) {
      const parts = repository.split("/");
      if (parts.length < 3) return undefined;
      const [orgName, name] = parts as [string, string];
      const upstream = await configOf(orgName, name);
      return upstream && { upstream, path: parts.slice(2).join("/") };
    },
    byName: configOf,
    close: unsubscribe,
  };
}
