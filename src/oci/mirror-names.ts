import { MAX_GROUP_NAME_LENGTH, pathComponentProblem } from "../core/registry-name.js";
import { REPOSITORY_NAME } from "./routes.js";

/**
 * The transparent mirror (ADR 0053): which registry names a request for another registry's
 * repository is served from, by `--mirror-upstream <registry host>=<org>/<upstream name>`.
 */

/** One `--mirror-upstream` mapping: requests for `host`'s repositories go to `<org>/<upstream>/…`. */
export interface MirrorUpstream {
  /** The registry host, lowercase, as containerd sends it in `?ns=` (`docker.io`, `ghcr.io`, `reg.example:5000`). */
  host: string;
  /** The organization's name. */
  org: string;
  /** The upstream's name in that organization. */
  upstream: string;
}

/** The host Docker's `registry-mirrors` stands for: requests without `ns` may be for it. */
export const DOCKER_HUB_HOST = "docker.io";

/** Other names of Docker Hub's registry, read as `docker.io` in flags and in `ns`. */
const DOCKER_HUB_ALIASES: ReadonlySet<string> = new Set(["index.docker.io", "registry-1.docker.io"]);

/** `host` lowercased, Docker Hub's other names as `docker.io`. */
function canonicalHost(host: string): string {
  const lower = host.toLowerCase();
  return DOCKER_HUB_ALIASES.has(lower) ? DOCKER_HUB_HOST : lower;
}

const HOST = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*(?::[0-9]{1,5})?$/;

/** A `--mirror-upstream` value that is not `<registry host>=<org>/<upstream name>`; the message says why. */
export class MirrorUpstreamSpecError extends Error {}

/**
 * Parses `--mirror-upstream` values (each may also hold several, comma-separated), e.g.
 * `docker.io=acme/hub`. The host is lowercased (`index.docker.io` and `registry-1.docker.io` read as
 * `docker.io`); the organization and upstream names must be
 * registry path components. Throws MirrorUpstreamSpecError on bad syntax or a host given twice.
 */
export function parseMirrorUpstreams(values: readonly string[]): MirrorUpstream[] {
  const mappings: MirrorUpstream[] = [];
  for (const value of values.flatMap((v) => v.split(",")).map((v) => v.trim())) {
    if (value === "") continue;
    const eq = value.indexOf("=");
    const host = canonicalHost((eq < 0 ? "" : value.slice(0, eq)).trim());
    const target =
      eq < 0
        ? []
        : value
            .slice(eq + 1)
            .trim()
            .split("/");
    if (eq < 0 || target.length !== 2) {
      throw new MirrorUpstreamSpecError(`"${value}" is not <registry host>=<org>/<upstream name>`);
    }
    if (!HOST.test(host)) {
      throw new MirrorUpstreamSpecError(`"${host}" in "${value}" is not a registry host (e.g. docker.io)`);
    }
    const [org, upstream] = target as [string, string];
    for (const [what, name] of [
      ["organization", org],
      ["upstream name", upstream],
    ] as const) {
      const problem = pathComponentProblem(name, MAX_GROUP_NAME_LENGTH);
      if (problem) throw new MirrorUpstreamSpecError(`the ${what} "${name}" in "${value}" ${problem}`);
    }
    if (mappings.some((m) => m.host === host)) {
      throw new MirrorUpstreamSpecError(`${host} is mapped twice`);
    }
    mappings.push({ host, org, upstream });
  }
  return mappings;
}

/** Maps the repository names of mirror requests to the upstream caches they stand for. */
export interface MirrorNames {
  /**
   * The registry name a request for `name` is served from:
   * - `ns` (containerd's `?ns=<host>`, case-insensitive, Docker Hub's other names as `docker.io`)
   *   of a mapped host: `<org>/<upstream>/<name>`;
   * - `ns` of a host not mapped: `name` as is;
   * - no `ns`: `<org>/<upstream>/<name>` of the `docker.io` mapping when there is one and the
   *   first component of `name` is not an existing organization (an organization wins), else `name`.
   * A name that is not a valid repository name is returned as is (the handlers refuse it).
   */
  map(name: string, ns: string | undefined): Promise<string>;
}

/**
 * Creates the mapper over `mappings`; undefined when there are none (no request is mapped).
 * `isOrganization` says whether an organization of that name exists; its answers are kept for
 * `ttlMs` (default 1000), so creating an organization named like a Docker Hub namespace takes
 * effect within that time.
 */
export function createMirrorNames(opts: {
  mappings: readonly MirrorUpstream[];
  isOrganization: (name: string) => Promise<boolean>;
  now?: () => number;
  ttlMs?: number;
}): MirrorNames | undefined {
  if (opts.mappings.length === 0) return undefined;
  const byHost = new Map(opts.mappings.map((m) => [m.host, `${m.org}/${m.upstream}`]));
  const hub = byHost.get(DOCKER_HUB_HOST);
  const now = opts.now ?? Date.now;
  const ttlMs = opts.ttlMs ?? 1000;
  const known = new Map<string, { org: boolean; expires: number }>();

  async function isOrganization(name: string): Promise<boolean> {
    const at = now();
    const hit = known.get(name);
    if (hit && hit.expires > at) return hit.org;
    const org = await opts.isOrganization(name);
    if (known.size >= 10_000) known.clear();
    known.set(name, { org, expires: at + ttlMs });
    return org;
  }

  return {
    async map(name, ns) {
      if (!REPOSITORY_NAME.test(name)) return name;
      if (ns !== undefined && ns !== "") {
        const prefix = byHost.get(canonicalHost(ns));
        return prefix === undefined ? name : `${prefix}/${name}`;
      }
      if (hub === undefined) return name;
      const first = name.split("/")[0] as string;
      return (await isOrganization(first)) ? name : `${hub}/${name}`;
    },
  };
}
