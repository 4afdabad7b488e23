import "./panels.css";
import { Link } from "../lib/router";

/** One section of a {@link SectionNav}: its label and where it leads. */
export interface Section {
  id: string;
  label: string;
  to: string;
}

/**
 * The sub-navigation of an area with several pages (Mirroring: upstreams, replication; Governance): one link
 * per section, the current one marked `aria-current="page"`.
 */
export function SectionNav({
  label,
  sections,
  current,
}: {
  /** The landmark's name: "Mirroring sections". */
  label: string;
  sections: readonly Section[];
  current: string;
}) {
  return (
    <nav className="tabs" aria-label={label}>
      <ul>
        {sections.map((s) => (
          <li key={s.id}>
            <Link to={s.to} aria-current={s.id === current ? "page" : undefined}>
              {s.label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}
