import { ancestorUids } from "./format";
import { useQuery } from "./use-query";
import { useClient } from "./wharf-context";

/** One group on the way from the organization down. */
export interface PathStep {
  uid: string;
  name: string;
}

/**
 * The groups from the organization down to `groupUid` (itself included), by one List of exactly
 * those uids; a group the caller may not see is left out.
 */
export function useGroupPath(groupUid: string) {
  const client = useClient();
  return useQuery(async (): Promise<PathStep[]> => {
    const ids = [...ancestorUids(groupUid), groupUid];
    const { groups } = await client.iam.groups.listGroups({ uidp: { ids }, pageSize: ids.length });
    return groups.map((g) => ({ uid: g.uid, name: g.name })).sort((a, b) => a.uid.length - b.uid.length);
  }, [client, groupUid]);
}

/** The registry's host (`registry.example.com:5000`) for image references, once known. */
export function useRegistryHost() {
  const client = useClient();
  return useQuery(async () => new URL(await client.registryUrl()).host, [client]);
}
