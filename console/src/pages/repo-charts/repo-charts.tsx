import type { TagHistoryRecord } from "wharf/sdk";
import { SizeHistory } from "./size-history";
import { VulnTrend } from "./vuln-trend";
import "./repo-charts.css";

/**
 * The repository page's charts for the selected tag: vulnerabilities per day and image size
 * along the history. Its own lazy chunk (with the chart components), loaded after the tag table
 * and timeline so it never delays them.
 */
export default function RepoCharts({
  repoUid,
  tag,
  records,
}: {
  repoUid: string;
  tag: string;
  /** The tag's history, oldest first. */
  records: readonly TagHistoryRecord[];
}) {
  return (
    <section aria-labelledby="charts-heading" data-testid="repo-charts">
      <h2 id="charts-heading">
        Trends of <code>{tag}</code>
      </h2>
      <VulnTrend repoUid={repoUid} tag={tag} historyLength={records.length} />
      <SizeHistory repoUid={repoUid} tag={tag} records={records} />
    </section>
  );
}
