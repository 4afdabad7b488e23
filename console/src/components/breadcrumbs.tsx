import { pathWithUid } from "../lib/format";
import type { PathStep } from "../lib/paths";
import { Link } from "../lib/router";

/** Organizations › folders › (current), each a link to its group page. */
export function Breadcrumbs({ steps, current }: { steps: readonly PathStep[]; current?: string }) {
  return (
    <nav aria-label="Breadcrumb" className="breadcrumbs">
      <ol>
        <li>
          <Link to="/orgs">Organizations</Link>
        </li>
        {steps.map((s) => (
          <li key={s.uid}>
            <Link to={pathWithUid("/groups", s.uid)}>{s.name}</Link>
          </li>
        ))}
        {current && <li aria-current="page">{current}</li>}
      </ol>
    </nav>
  );
}
