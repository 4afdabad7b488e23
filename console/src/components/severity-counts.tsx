import { SEVERITY_NAMES, type SeverityName } from "wharf/sdk";

/** Vulnerability counts as badges, worst first ("no known vulnerabilities" when all are 0). */
export function SeverityCounts({ counts }: { counts: Partial<Record<SeverityName, number>> }) {
  const present = SEVERITY_NAMES.filter((s) => (counts[s] ?? 0) > 0);
  if (present.length === 0) return <span className="muted">no known vulnerabilities</span>;
  return (
    <span className="severity-counts" data-testid="severity-counts">
      {present.map((s) => (
        <span key={s} className={`severity ${s}`}>
          {counts[s]} {s}
        </span>
      ))}
    </span>
  );
}
