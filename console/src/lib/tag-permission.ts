import type { WhoAmI } from "wharf/sdk";

/**
 * Whether the signed-in caller may move the tags of repo `repoUid` (capability `tag.update` on
 * the repo or a group above it, or the server administrator). Only for showing or hiding
 * actions: the server decides, and a refusal is shown as its error.
 */
export function mayUpdateTags(me: WhoAmI | undefined, repoUid: string): boolean {
  if (!me) return false;
  if (me.admin) return true;
  return me.groups.some(
    (g) => (repoUid === g.uid || repoUid.startsWith(`${g.uid}/`)) && g.capabilities.includes("tag.update"),
  );
}
