import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { useId, useState } from "react";
import { ApiError } from "../../components/api-error";
import { LineChart } from "../../components/charts/line-chart";
import { DAY_MS } from "../../components/charts/scale";
import { Loading } from "../../components/loading";
import { useQuery } from "../../lib/use-query";
import { useClient } from "../../lib/wharf-context";
import { formatDay } from "./day-format";
import { lastDays, severitySeries } from "./vuln-series";

/** The periods one may choose, in days. */
export const PERIODS = [30, 90] as const;

/**
 * Vulnerabilities of `tag` by severity per day over the last 30 or 90 days (a choice), as
 * ListVulnCountReports counts them: per UTC day, the image the tag named at the day's end,
 * VEX-suppressed matches left out.
 */
export function VulnTrend({
  repoUid,
  tag,
  historyLength,
}: {
  repoUid: string;
  tag: string;
  /** The tag's history records: a new one (a push, a restore) asks for the counts again. */
  historyLength: number;
}) {
  const client = useClient();
  const [days, setDays] = useState<(typeof PERIODS)[number]>(30);
  const [from, to] = lastDays(days, Date.now());
  const counts = useQuery(
    () =>
      client.registryV1.vulnerabilities.listVulnCountReports({
        repo: repoUid,
        tag,
        from: timestampFromMs(from),
        to: timestampFromMs(to + DAY_MS - 1),
      }),
    [client, repoUid, tag, days, historyLength],
  );
  const name = useId();
  return (
    <section aria-labelledby={`${name}-heading`} className="repo-chart">
      <h3 id={`${name}-heading`}>Vulnerabilities over time</h3>
      <fieldset className="period-choice">
        <legend>Period</legend>
        {PERIODS.map((p) => (
          <label key={p}>
            <input type="radio" name={name} value={p} checked={days === p} onChange={() => setDays(p)} /> Last{" "}
            {p} days
          </label>
        ))}
      </fieldset>
      <ApiError error={counts.error} />
      {counts.loading && !counts.data && <Loading what="Loading vulnerability counts" />}
      {counts.data && (
        <div aria-busy={counts.loading}>
          <LineChart
            title={`Vulnerabilities of ${tag} per day, last ${days} days`}
            series={severitySeries(counts.data.items)}
            xDomain={[from, to]}
            formatX={formatDay}
            formatY={String}
            integer
            emptyText={`No vulnerability counts for ${tag} in the last ${days} days.`}
          />
        </div>
      )}
    </section>
  );
}
