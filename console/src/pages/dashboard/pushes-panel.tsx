import type { registry } from "wharf/sdk";
import { BarChart } from "../../components/charts/bar-chart";
import type { Query } from "../../lib/use-query";
import { Panel } from "./panel";

/** Pushes per UTC day over the last 30 days (GetInsights) as a bar chart, with their total. */
export function PushesPanel({ insights }: { insights: Query<registry.Insights> }) {
  return (
    <Panel title="Pushes per day" query={insights} wide deniedText="Needs a role in this organization.">
      {(data) => {
        const total = data.pushesPerDay.reduce((sum, d) => sum + Number(d.count), 0);
        return (
          <>
            <p data-testid="pushes-total">
              <strong>{total}</strong> pushes in the last {data.pushesPerDay.length} days
            </p>
            <BarChart
              title="Pushes"
              xLabel="Day (UTC)"
              bars={data.pushesPerDay.map((d) => ({ label: d.day, value: Number(d.count) }))}
            />
          </>
        );
      }}
    </Panel>
  );
}
