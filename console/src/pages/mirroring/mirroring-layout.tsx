import type { ReactNode } from "react";
import { GroupChoice } from "../../components/group-choice";
import { SectionNav } from "../../components/section-nav";
import "./mirroring.css";

/** The Mirroring area's sections, each per organization. */
export type MirroringSection = "upstreams" | "replication";

const SECTIONS: { id: MirroringSection; label: string }[] = [
  { id: "upstreams", label: "Upstreams (pull-through cache)" },
  { id: "replication", label: "Replication" },
];

/**
 * The frame of a Mirroring page: heading, sub-navigation keeping the organization, and either the
 * section's content or, without an organization, the organization chooser.
 */
export function MirroringLayout({
  section,
  org,
  title,
  children,
}: {
  section: MirroringSection;
  /** The organization's uid ("" when none is chosen yet). */
  org: string;
  /** The heading's text once the organization is known. */
  title?: string;
  children: ReactNode;
}) {
  const label = SECTIONS.find((s) => s.id === section)?.label ?? "";
  return (
    <main id="main">
      <h1>{title ? `${label}: ${title}` : `Mirroring: ${label}`}</h1>
      <SectionNav
        label="Mirroring sections"
        current={section}
        sections={SECTIONS.map((s) => ({ ...s, to: `/mirroring/${s.id}${org ? `/${org}` : ""}` }))}
      />
      {org ? (
        children
      ) : (
        <GroupChoice basePath={`/mirroring/${section}`} purpose={`to manage its ${section}`} />
      )}
    </main>
  );
}
