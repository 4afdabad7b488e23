import type { registry, vulnerabilities } from "wharf/sdk";
import { pathWithUid, shortDigest } from "../../lib/format";

/** What a result is. */
export type SearchKind = "repo" | "tag" | "image" | "advisory";

/** One result of the search box: what it shows and where it leads. */
export interface SearchOption {
  /** Unique among the results (an element id is made from it). */
  key: string;
  kind: SearchKind;
  label: string;
  detail: string;
  /** The console path that shows it. */
  href: string;
}

/** The results of one kind, under a heading. */
export interface SearchGroup {
  kind: SearchKind;
  title: string;
  options: SearchOption[];
}

/**
 * Advisory ids (`CGA-xxxx-xxxx-xxxx`, and `WGA-…` Wharf derives) over the CGA alphabet: looked up
 * by id, since the advisories' text search covers artifacts, components and aliases only.
 */
const ADVISORY_ID =
  /^(CGA|WGA)(-[23456789cfghjmpqrvwx]{4}-[23456789cfghjmpqrvwx]{4}-[23456789cfghjmpqrvwx]{4})$/i;

/** The advisory id `query` names, as stored (upper-case prefix, lower-case groups), or undefined. */
export function advisoryIdOf(query: string): string | undefined {
  const match = ADVISORY_ID.exec(query);
  return match ? `${match[1]?.toUpperCase()}${match[2]?.toLowerCase()}` : undefined;
}

/** The console path of a repo, optionally with a tag selected. */
export function repoHref(repoUid: string, tag?: string): string {
  const path = pathWithUid("/repos", repoUid);
  return tag === undefined ? path : `${path}?tag=${encodeURIComponent(tag)}`;
}

/** The console path of an image (a digest in a repo). */
export function imageHref(digest: string, repoUid: string): string {
  return pathWithUid(`/images/${encodeURIComponent(digest)}`, repoUid);
}

/** The advisories page filtered to one advisory id. */
export function advisoryHref(advisoryId: string): string {
  return `/advisories?id=${encodeURIComponent(advisoryId)}`;
}

/**
 * The search answer and the advisories found, as groups in a fixed order (repositories, tags,
 * images, advisories); kinds without results are left out.
 */
export function searchGroups(
  found: registry.SearchResponse | undefined,
  advisories: readonly vulnerabilities.Advisory[],
): SearchGroup[] {
  const groups: SearchGroup[] = [
    {
      kind: "repo",
      title: "Repositories",
      options: (found?.repos ?? []).flatMap((m) =>
        m.repo
          ? [
              {
                key: `repo:${m.repo.uid}`,
                kind: "repo" as const,
                label: m.repoPath,
                detail: m.repo.description,
                href: repoHref(m.repo.uid),
              },
            ]
          : [],
      ),
    },
    {
      kind: "tag",
      title: "Tags",
      options: (found?.tags ?? []).flatMap((m) =>
        m.tag
          ? [
              {
                key: `tag:${m.tag.uid}`,
                kind: "tag" as const,
                label: `${m.repoPath}:${m.tag.name}`,
                detail: shortDigest(m.tag.digest),
                href: repoHref(m.repoUid, m.tag.name),
              },
            ]
          : [],
      ),
    },
    {
      kind: "image",
      title: "Images",
      options: (found?.images ?? []).map((m) => ({
        key: `image:${m.repoUid}@${m.digest}`,
        kind: "image" as const,
        label: `${m.repoPath}@${shortDigest(m.digest)}`,
        detail: m.tags.length > 0 ? m.tags.join(", ") : "untagged",
        href: imageHref(m.digest, m.repoUid),
      })),
    },
    {
      kind: "advisory",
      title: "Advisories",
      options: advisories.map((a) => ({
        key: `advisory:${a.uid}`,
        kind: "advisory" as const,
        label: a.advisoryId,
        detail: [a.artifactName, a.aliases.join(", ")].filter(Boolean).join(" · "),
        href: advisoryHref(a.advisoryId),
      })),
    },
  ];
  return groups.filter((g) => g.options.length > 0);
}
