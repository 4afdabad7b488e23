import { listAll } from "wharf/sdk";
import { type Query, useQuery } from "../lib/use-query";
import { useClient } from "../lib/wharf-context";
import { firstItems } from "./first-items";

/** Most folders, and most repos, a scope chooser offers. */
const MAX_SCOPES = 500;

/** A place a rule, policy or key can hang from: the organization, one of its folders, or a repo. */
export interface Scope {
  uid: string;
  /** `acme`, `acme/team` (folder), `acme/team/app` (repo): names from the organization down. */
  path: string;
  kind: "organization" | "folder" | "repo";
}

/** The scopes of a group, the group first, and the path of any uid below it. */
export interface Scopes {
  list: Scope[];
  /** True when only the first folders or repos were loaded. */
  more: boolean;
  /** The names-path of `uid` (an organization, folder or repo), its uid when unknown. */
  pathOf(uid: string): string;
}

/**
 * The group `org` (an organization, or a folder), its folders and its repos, with readable paths:
 * where immutability rules, retention policies, signing keys and pull policies can hang from.
 */
export function useScopes(org: string): Query<Scopes> {
  const client = useClient();
  return useQuery(async () => {
    const [groups, repos] = await Promise.all([
      firstItems(listAll(client.iam.groups.listGroups, { uidp: { descendantsOf: org } }), MAX_SCOPES),
      firstItems(listAll(client.registry.repos.listRepos, { uidp: { descendantsOf: org } }), MAX_SCOPES),
    ]);
    const names = new Map<string, string>();
    for (const g of groups.items) names.set(g.uid, g.name);
    for (const r of repos.items) names.set(r.uid, r.name);
    if (!names.has(org)) names.set(org, (await client.iam.groups.getGroup({ uid: org })).name);
    const pathOf = (uid: string) => {
      const parts = uid.split("/");
      const path = parts.map((_, i) => names.get(parts.slice(0, i + 1).join("/")));
      // Above a folder chosen as the group, names are unknown: the path starts at the group.
      return path.at(-1) === undefined ? uid : path.filter((p) => p !== undefined).join("/");
    };
    const repoUids = new Set(repos.items.map((r) => r.uid));
    const kindOf = (uid: string): Scope["kind"] =>
      repoUids.has(uid) ? "repo" : uid.includes("/") ? "folder" : "organization";
    const list: Scope[] = [...names.keys()]
      .map((uid) => ({
        uid,
        path: pathOf(uid),
        kind: kindOf(uid),
      }))
      .sort((a, b) => (a.uid === org ? -1 : b.uid === org ? 1 : a.path.localeCompare(b.path)));
    return { list, more: groups.more || repos.more, pathOf };
  }, [client, org]);
}

/** The uid of the organization, folder or repo a rule or policy (`<parent uid>/<16 hex>`) hangs from. */
export function parentOf(uid: string): string {
  return uid.split("/").slice(0, -1).join("/");
}
