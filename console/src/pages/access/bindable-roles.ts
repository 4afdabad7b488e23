import { type iam, listAll } from "wharf/sdk";
import { firstItems } from "../../components/first-items";
import { type Query, useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";

/** Most roles of each kind a picker lists. */
const MAX_ROLES = 200;

/** The roles a binding, invite or identity provider of a group can name. */
export interface BindableRoles {
  builtIn: iam.Role[];
  /** The group's custom roles. */
  custom: iam.Role[];
}

/** The built-in roles and the custom roles of `group`, for the role pickers and the roles list. */
export function useBindableRoles(group: string): Query<BindableRoles> {
  const client = useClient();
  return useQuery(async () => {
    const [builtIn, custom] = await Promise.all([
      firstItems(listAll(client.iam.roles.listRoles, { uidp: { inRoot: true } }), MAX_ROLES),
      firstItems(listAll(client.iam.roles.listRoles, { uidp: { childrenOf: group } }), MAX_ROLES),
    ]);
    // Built-in roles (root uids) come with every list: keep each kind to its own list.
    return {
      builtIn: builtIn.items.filter((r) => !r.uid.includes("/")),
      custom: custom.items.filter((r) => r.uid.startsWith(`${group}/`)),
    };
  }, [client, group]);
}
