import { isAncestorOrSelf, selfAndAncestors } from "../../core/uidp.js";
import type { Store } from "../../storage/store.js";
import type { RemoteRegistry } from "../remote/remote-registry.js";
import { globMatcher } from "../tag-patterns.js";
import type { ReplicationRuleConfig } from "./replication-contract.js";

/** One repository a run copies: where it is read and where it lands. */
export interface RepoPair {
  sourceRepo: string;
  targetRepo: string;
}

const PAGE = 200;

/** The characters that make a repo pattern a glob rather than a literal path. */
const GLOB_CHARACTERS = /[*?[\]]/;

/** A matcher of `pattern` ("" matches everything, like `**` for repos and `*` for tags). */
export function patternMatcher(pattern: string): (name: string) => boolean {
  return pattern === "" ? () => true : globMatcher(pattern);
}

/** `a/b` from the parts given, without empty parts or stray slashes (a destination `mirror/` included). */
function joinPath(...parts: string[]): string {
  return parts
    .map((p) => p.replace(/^\/+|\/+$/g, ""))
    .filter((p) => p !== "")
    .join("/");
}

/**
 * The repos of a PUSH rule: every repo under the rule's organization whose path below it matches
 * `repoPattern`, landing at `<destination>/<that path>` on the remote (rule at `acme`, repo
 * `acme/app1`, destination `mirror` → `mirror/app1`). Read page by page, in uid order.
 */
export async function* pushRepos(store: Store, rule: ReplicationRuleConfig): AsyncGenerator<RepoPair> {
  const matches = patternMatcher(rule.repoPattern);
  const groupNames = new Map<string, string>();
  let after: string | undefined;
  for (;;) {
    const page = await store.repos.list(
      { uidp: { descendantsOf: rule.orgUid } },
      {
        order: { field: "uid", desc: false },
        ...(after === undefined ? {} : { after: { value: after, uid: after } }),
        limit: PAGE,
        skip: 0,
      },
    );
    const rows = page.rows.slice(0, PAGE);
    const unknown = [
      ...new Set(rows.flatMap((r) => selfAndAncestors(r.groupUid)).filter((g) => !groupNames.has(g))),
    ];
    for (const group of await store.groups.getMany(unknown)) groupNames.set(group.uid, group.name);
    for (const repo of rows) {
      const below = selfAndAncestors(repo.groupUid).filter(
        (g) => g !== rule.orgUid && isAncestorOrSelf(rule.orgUid, g),
      );
      const names = below.map((g) => groupNames.get(g));
      if (names.some((n) => n === undefined)) continue; // a folder deleted meanwhile
      const path = joinPath(...(names as string[]), repo.name);
      if (!matches(path)) continue;
      yield { sourceRepo: joinPath(rule.orgName, path), targetRepo: joinPath(rule.destination, path) };
    }
    if (page.rows.length <= PAGE) return;
    after = rows.at(-1)?.uid;
  }
}

/**
 * The repos of a PULL rule: `repoPattern` is the remote repo path, a literal one as is, a glob
 * matched against the remote's catalog; each lands at `<organization>/<destination>/<remote path>`.
 * A catalog the remote refuses or lacks rejects (RemoteError) at the first step.
 */
export async function* pullRepos(
  remote: RemoteRegistry,
  rule: ReplicationRuleConfig,
  signal: AbortSignal,
): AsyncGenerator<RepoPair> {
  const pair = (path: string): RepoPair => ({
    sourceRepo: path,
    targetRepo: joinPath(rule.orgName, rule.destination, path),
  });
  if (rule.repoPattern !== "" && !GLOB_CHARACTERS.test(rule.repoPattern)) {
    yield pair(rule.repoPattern);
    return;
  }
  const matches = patternMatcher(rule.repoPattern);
  for await (const path of remote.catalog(signal)) if (matches(path)) yield pair(path);
}
