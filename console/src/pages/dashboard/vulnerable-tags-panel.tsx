import type { registry } from "wharf/sdk";
import { SeverityCounts } from "../../components/severity-counts";
import { pathWithUid, shortDigest } from "../../lib/format";
import { Link } from "../../lib/router";
import type { Query } from "../../lib/use-query";
import { Panel } from "./panel";

/** The organization's most vulnerable tags (GetInsights): unsuppressed matches, worst first. */
export function VulnerableTagsPanel({ insights }: { insights: Query<registry.Insights> }) {
  return (
    <Panel title="Most vulnerable tags" query={insights} wide deniedText="Needs a role in this organization.">
      {(data) => {
        if (data.vulnerabilitiesOmitted) {
          return (
            <p className="muted panel-denied">
              Vulnerability reports need the vuln_report.list capability here.
            </p>
          );
        }
        if (data.mostVulnerableTags.length === 0) {
          return <p className="muted">No tag's current image has a known, unsuppressed vulnerability.</p>;
        }
        return (
          <div className="table-wrap">
            <table>
              <caption className="visually-hidden">Tags with the most unsuppressed vulnerabilities</caption>
              <thead>
                <tr>
                  <th scope="col">Tag</th>
                  <th scope="col">Vulnerabilities</th>
                </tr>
              </thead>
              <tbody>
                {data.mostVulnerableTags.map((t) => (
                  <tr key={`${t.repoUid}:${t.tag}`} data-testid="vulnerable-tag">
                    <td>
                      <Link to={pathWithUid("/repos", t.repoUid)}>{t.repo}</Link>:
                      <span className="mono">{t.tag}</span>
                      <br />
                      <small className="muted mono">{shortDigest(t.digest)}</small>
                    </td>
                    <td>
                      <SeverityCounts
                        counts={{
                          critical: Number(t.critical),
                          high: Number(t.high),
                          medium: Number(t.medium),
                          low: Number(t.low),
                        }}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        );
      }}
    </Panel>
  );
}
