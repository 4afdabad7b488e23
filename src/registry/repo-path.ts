import { selfAndAncestors } from "../core/uidp.js";
import type { RepoRow } from "../storage/registry-store.js";
import type { Store } from "../storage/store.js";

/**
 * The registry paths of `repos` (`acme/prod/api`: their groups' names and their own), by repo uid,
 * reading every group they sit under in one query. A group gone meanwhile reads as `?`.
 */
export async function repoPathsOf(
  store: Pick<Store, "groups">,
  repos: readonly RepoRow[],
): Promise<Map<string, string>> {
  const groupUids = [...new Set(repos.flatMap((r) => selfAndAncestors(r.groupUid)))];
  const names = new Map((await store.groups.getMany(groupUids)).map((g) => [g.uid, g.name]));
  return new Map(
    repos.map((r) => [
      r.uid,
      [...selfAndAncestors(r.groupUid).map((uid) => names.get(uid) ?? "?"), r.name].join("/"),
    ]),
  );
}

/** The registry path of one repo (`acme/prod/api`); see {@link repoPathsOf}. */
export async function repoPathOf(store: Pick<Store, "groups">, repo: RepoRow): Promise<string> {
  return (await repoPathsOf(store, [repo])).get(repo.uid) as string;
}
