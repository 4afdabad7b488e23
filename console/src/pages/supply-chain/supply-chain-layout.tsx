import type { ReactNode } from "react";
import { GroupChoice } from "../../components/group-choice";
import { SectionNav } from "../../components/section-nav";
import "./supply-chain.css";

/** The Supply chain area's sections, each per organization. */
export type SupplyChainSection = "keys" | "policies";

const SECTIONS: { id: SupplyChainSection; label: string; purpose: string }[] = [
  { id: "keys", label: "Signing keys", purpose: "to manage its signing keys" },
  { id: "policies", label: "Pull policies", purpose: "to manage its pull policies" },
];

/**
 * The frame of a Supply chain page: heading, sub-navigation keeping the organization, and either
 * the section's content or, without an organization, the organization chooser.
 */
export function SupplyChainLayout({
  section,
  org,
  title,
  children,
}: {
  section: SupplyChainSection;
  /** The organization's uid ("" when none is chosen yet). */
  org: string;
  /** The organization's name once known. */
  title?: string;
  children: ReactNode;
}) {
  const current = SECTIONS.find((s) => s.id === section) ?? SECTIONS[0]!;
  return (
    <main id="main">
      <h1>{title ? `${current.label}: ${title}` : `Supply chain: ${current.label}`}</h1>
      <SectionNav
        label="Supply chain sections"
        current={section}
        sections={SECTIONS.map((s) => ({ ...s, to: `/supply-chain/${s.id}${org ? `/${org}` : ""}` }))}
      />
      {org ? children : <GroupChoice basePath={`/supply-chain/${section}`} purpose={current.purpose} />}
    </main>
  );
}
