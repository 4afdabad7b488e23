import type { registry } from "wharf/sdk";
import type { Query } from "../../lib/use-query";
import { Panel } from "./panel";

/** Pushes per UTC day over the last 30 days (GetInsights), with their total. */
export function PushesPanel({ insights }: { insights: Query<registry.Insights> }) {
  return (
    <Panel title="Pushes per day" query={insights} deniedText="Needs a role in this organization.">
      {(data) => {
        const total = data.pushesPerDay.reduce((sum, d) => sum + Number(d.count), 0);
        return (
          <>
            <p data-testid="pushes-total">
              <strong>{total}</strong> pushes in the last {data.pushesPerDay.length} days
            </p>
            <PushesTable days={data.pushesPerDay} />
          </>
        );
      }}
    </Panel>
  );
}

/** The days with pushes as a table (the accessible form of the chart). */
function PushesTable({ days }: { days: readonly registry.DailyPushes[] }) {
  const busy = days.filter((d) => d.count > 0n);
  if (busy.length === 0) return <p className="muted">No pushes in that time.</p>;
  return (
    <div className="table-wrap">
      <table data-testid="pushes-table">
        <caption className="visually-hidden">Days with pushes</caption>
        <thead>
          <tr>
            <th scope="col">Day (UTC)</th>
            <th scope="col" className="numeric">
              Pushes
            </th>
          </tr>
        </thead>
        <tbody>
          {busy.map((d) => (
            <tr key={d.day}>
              <td>{d.day}</td>
              <td className="numeric">{Number(d.count)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
