import type { ComponentType } from "react";
import { GroupChoice } from "../../components/group-choice";
import "../../components/panels.css";
import { SectionNav } from "../../components/section-nav";
import type { RouteParams } from "../../lib/route-params";
import { Link, useSearchParams } from "../../lib/router";
import AuditSection from "./audit-section";
import "./governance.css";
import ImmutabilitySection from "./immutability-section";
import QuotasSection from "./quotas-section";
import RetentionSection from "./retention-section";
import { GOVERNANCE_SECTIONS, type GovernanceSection, sectionPath } from "./sections";

const PER_GROUP: Record<string, ComponentType<{ group: string }>> = {
  immutability: ImmutabilitySection,
  retention: RetentionSection,
  quotas: QuotasSection,
};

/**
 * `/governance/<section>[/<group uid>]`: immutability rules, retention policies, quotas and
 * usage (per group: a chooser when none is in the path) and the audit log (filters in the query).
 * `/governance` alone lists the sections.
 */
export default function GovernancePage(params: RouteParams) {
  const [sectionId = "", ...rest] = (params["*"] ?? "").split("/");
  const search = useSearchParams();
  const section = GOVERNANCE_SECTIONS.find((s) => s.id === sectionId);
  const group = section?.perGroup ? rest.join("/") : (search.get("org") ?? "");
  return (
    <main id="main">
      <h1>Governance{section ? `: ${section.label}` : ""}</h1>
      <SubNav current={section} group={group} />
      {section ? <SectionBody section={section} group={group} /> : <Index />}
    </main>
  );
}

function SubNav({ current, group }: { current: GovernanceSection | undefined; group: string }) {
  return (
    <SectionNav
      label="Governance sections"
      sections={GOVERNANCE_SECTIONS.map((s) => ({ id: s.id, label: s.label, to: sectionPath(s, group) }))}
      current={current?.id ?? ""}
    />
  );
}

function SectionBody({ section, group }: { section: GovernanceSection; group: string }) {
  if (!section.perGroup) return <AuditSection />;
  if (!group) {
    return (
      <GroupChoice
        basePath={`/governance/${section.id}`}
        purpose={`to see its ${section.label.toLowerCase()}`}
      />
    );
  }
  const Section = PER_GROUP[section.id]!;
  return (
    <>
      <p className="muted">
        Group <code>{group}</code> · <Link to={`/governance/${section.id}`}>Other groups</Link>
      </p>
      <Section key={group} group={group} />
    </>
  );
}

function Index() {
  return (
    <ul className="governance-index">
      {GOVERNANCE_SECTIONS.map((s) => (
        <li key={s.id}>
          <Link to={`/governance/${s.id}`}>{s.label}</Link>: {s.summary}
        </li>
      ))}
    </ul>
  );
}
