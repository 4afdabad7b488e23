import { listAll } from "wharf/sdk";
import { firstItems } from "../../components/first-items";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";

/** Where a key or policy can be attached: the organization, a folder or a repository under it. */
export interface Scope {
  uid: string;
  /** The path of names from the organization down: `acme/team/web`. */
  label: string;
  kind: "organization" | "folder" | "repository";
}

/** Most folders and repositories offered. */
const MAX_SCOPES = 500;

/**
 * The organization `org` and the folders and repositories under it, by path, so a page can list
 * the resources attached anywhere in the organization and offer where to attach a new one.
 */
export function useScopes(org: string) {
  const client = useClient();
  return useQuery(async (): Promise<Scope[]> => {
    const [orgInfo, groups, repos] = await Promise.all([
      client.iam.groups.getGroup({ uid: org }),
      firstItems(listAll(client.iam.groups.listGroups, { uidp: { descendantsOf: org } }), MAX_SCOPES),
      firstItems(listAll(client.registry.repos.listRepos, { uidp: { descendantsOf: org } }), MAX_SCOPES),
    ]);
    const names = new Map<string, string>([[org, orgInfo.name]]);
    for (const g of groups.items) names.set(g.uid, g.name);
    for (const r of repos.items) names.set(r.uid, r.name);
    const label = (uid: string) => {
      const parts = uid.split("/");
      return parts.map((_, i) => names.get(parts.slice(0, i + 1).join("/")) ?? parts[i]).join("/");
    };
    const folders = groups.items.filter((g) => g.uid !== org);
    const repoScopes = repos.items.map((r) => ({
      uid: r.uid,
      label: label(r.uid),
      kind: "repository" as const,
    }));
    return [
      { uid: org, label: orgInfo.name, kind: "organization" as const },
      ...folders.map((g) => ({ uid: g.uid, label: label(g.uid), kind: "folder" as const })),
      ...repoScopes,
    ].sort((a, b) => (a.uid === org ? -1 : b.uid === org ? 1 : a.label.localeCompare(b.label)));
  }, [client, org]);
}

/** The uid of the resource `uid`'s parent (`<parent>/<16 hex>`). */
export function parentOf(uid: string): string {
  return uid.slice(0, Math.max(0, uid.lastIndexOf("/")));
}

/** The label of `uid` among `scopes`, else the uid itself. */
export function scopeLabel(scopes: readonly Scope[] | undefined, uid: string): string {
  return scopes?.find((s) => s.uid === uid)?.label ?? uid;
}
