/** One section of the governance pages: its path segment, its label and whether it is per organization. */
export interface GovernanceSection {
  id: "immutability" | "retention" | "quotas" | "audit";
  label: string;
  /** What the section is for, on the governance index. */
  summary: string;
  /** True: `/governance/<id>/<group uid>`; false: `/governance/<id>?org=…` (a filter). */
  perGroup: boolean;
}

/** The governance sections, in the order of the sub-navigation. */
export const GOVERNANCE_SECTIONS: readonly GovernanceSection[] = [
  {
    id: "immutability",
    label: "Immutability rules",
    summary: "Tag patterns whose tags, once pushed, never move and are never deleted.",
    perGroup: true,
  },
  {
    id: "retention",
    label: "Retention policies",
    summary: "Which tags to keep; preview what a run would delete, then run it.",
    perGroup: true,
  },
  {
    id: "quotas",
    label: "Quotas and usage",
    summary: "Storage, repos and tags an organization uses against its quota.",
    perGroup: true,
  },
  {
    id: "audit",
    label: "Audit log",
    summary: "Who did what, when, and what came of it.",
    perGroup: false,
  },
];

/** The path of `section` for `group` ("" when none is chosen). */
export function sectionPath(section: GovernanceSection, group: string): string {
  if (!group) return `/governance/${section.id}`;
  if (!section.perGroup) return `/governance/${section.id}?org=${encodeURIComponent(group.split("/")[0]!)}`;
  return `/governance/${section.id}/${group}`;
}
