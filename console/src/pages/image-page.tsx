import { useState } from "react";
import { SEVERITY_NAMES, type SeverityName, severityName, summarize } from "wharf/sdk";
import { ApiError } from "../components/api-error";
import { Breadcrumbs } from "../components/breadcrumbs";
import { CheckboxField } from "../components/checkbox-field";
import { CopyButton } from "../components/copy-button";
import { EmptyState } from "../components/empty-state";
import { Loading } from "../components/loading";
import { PolicyEvaluationPanel } from "../components/policy-evaluation-panel";
import { PullInstructions } from "../components/pull-instructions";
import { ChoiceField } from "../components/select-field";
import { SignaturesPanel } from "../components/signatures-panel";
import { formatBytes, formatTime, pathWithUid, shortDigest } from "../lib/format";
import { digestDetails } from "../lib/image-details";
import { safeHref } from "../lib/markdown";
import { useGroupPath, useRegistryHost } from "../lib/paths";
import { Link } from "../lib/router";
import { useQuery } from "../lib/use-query";
import { splitBySuppression, vexNote } from "../lib/vex";
import { type VulnFilter, visibleMatches, vulnerabilityLink } from "../lib/vuln-filter";
import { useClient } from "../lib/wharf-context";
import { ImageSbom } from "./image-sbom";

/** One image digest of a repository: architectures and sizes, referrers, the vulnerability report. */
export default function ImagePage(params: Record<string, string>) {
  const digest = params.digest ?? "";
  const repoUid = params["*"] ?? "";
  const client = useClient();
  const path = useGroupPath(repoUid.split("/").slice(0, -1).join("/"));
  const host = useRegistryHost();
  const repo = useQuery(() => client.registry.repos.getRepo({ uid: repoUid }), [client, repoUid]);
  const details = useQuery(() => digestDetails(client, repoUid, digest), [client, repoUid, digest]);
  const imageName =
    repo.data && path.data ? [...path.data.map((s) => s.name), repo.data.name].join("/") : undefined;
  const referrers = useQuery(
    () => (imageName ? client.referrers(imageName, digest) : Promise.resolve(undefined)),
    [client, imageName, digest],
  );
  const pinned = imageName && host.data ? `${host.data}/${imageName}@${digest}` : undefined;

  return (
    <main id="main">
      <Breadcrumbs steps={path.data ?? []} />
      <p>{repo.data && <Link to={pathWithUid("/repos", repoUid)}>{imageName ?? repo.data.name}</Link>}</p>
      <h1 className="mono">{shortDigest(digest)}</h1>
      <p className="mono digest-full">
        {digest} <CopyButton text={digest} label="Copy the digest" />
      </p>
      <ApiError error={repo.error ?? details.error} />
      {details.loading && !details.data && <Loading what="Loading the image" />}
      {details.data && (
        <section aria-labelledby="platforms-heading">
          <h2 id="platforms-heading">Architectures</h2>
          <table>
            <caption className="visually-hidden">Size per architecture</caption>
            <thead>
              <tr>
                <th scope="col">Architecture</th>
                <th scope="col">Size</th>
              </tr>
            </thead>
            <tbody>
              {details.data.sizes.map((s) => (
                <tr key={s.architecture}>
                  <td>{s.architecture}</td>
                  <td>{formatBytes(s.size)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
      <section aria-labelledby="referrers-heading">
        <h2 id="referrers-heading">Referrers</h2>
        <ApiError error={referrers.error} />
        {referrers.data?.length === 0 && (
          <p className="muted">No signatures, SBOMs or attestations refer to this image.</p>
        )}
        {referrers.data && referrers.data.length > 0 && (
          <ul>
            {referrers.data.map((r) => (
              <li key={r.digest}>
                <span>{r.artifactType || r.mediaType}</span> <code>{shortDigest(r.digest)}</code> (
                {formatBytes(r.size)})
              </li>
            ))}
          </ul>
        )}
      </section>
      <SignaturesPanel repoUid={repoUid} digest={digest} />
      <PolicyEvaluationPanel repoUid={repoUid} digest={digest} />
      {details.data && <VulnerabilityReport details={details.data} />}
      <ImageSbom repoUid={repoUid} digest={digest} />
      {pinned && <PullInstructions reference={pinned} />}
    </main>
  );
}

function VulnerabilityReport({
  details,
}: {
  details: NonNullable<Awaited<ReturnType<typeof digestDetails>>>;
}) {
  const [filter, setFilter] = useState<VulnFilter>({ minimum: "", fixableOnly: false });
  const [showSuppressed, setShowSuppressed] = useState(false);
  const report = details.report;
  if (!report) {
    return (
      <section aria-labelledby="vulns-heading">
        <h2 id="vulns-heading">Vulnerabilities</h2>
        <EmptyState title="No vulnerability report">
          <p>
            Upload a Grype, Trivy or cosign-vuln report:{" "}
            <code>POST /registry/v1/vuln_reports/&lt;repo uid&gt;?digest=…</code>, or attach it to the image
            as a referrer.
          </p>
        </EmptyState>
      </section>
    );
  }
  // VEX-suppressed matches do not count; they are listed only on request, marked.
  const { active, suppressed } = splitBySuppression(report.vulnerabilityMatches);
  const summary = summarize(active);
  const rows = visibleMatches(showSuppressed ? report.vulnerabilityMatches : active, filter);
  return (
    <section aria-labelledby="vulns-heading">
      <h2 id="vulns-heading">Vulnerabilities</h2>
      <p className="muted">
        {report.scanner?.name} {report.scanner?.version}, stored {formatTime(report.lastSeen)}
      </p>
      <table className="summary" data-testid="severity-summary">
        <caption className="visually-hidden">Matches per severity</caption>
        <thead>
          <tr>
            <th scope="col">Severity</th>
            <th scope="col">Matches</th>
            <th scope="col">Fixable</th>
          </tr>
        </thead>
        <tbody>
          {summary.map((row) => (
            <tr key={row.severity}>
              <td>
                <span className={`severity ${row.severity}`}>{row.severity}</span>
              </td>
              <td>{row.matches}</td>
              <td>{row.fixable}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="toolbar">
        <ChoiceField
          label="Minimum severity"
          value={filter.minimum}
          choices={[{ value: "", label: "Any" }, ...SEVERITY_NAMES.map((s) => ({ value: s, label: s }))]}
          onChange={(minimum) => setFilter({ ...filter, minimum: minimum as SeverityName | "" })}
        />
        <CheckboxField
          label="Fixable only"
          checked={filter.fixableOnly}
          onChange={(checked) => setFilter({ ...filter, fixableOnly: checked })}
        />
        {suppressed.length > 0 && (
          <button
            type="button"
            className="secondary"
            aria-pressed={showSuppressed}
            onClick={() => setShowSuppressed(!showSuppressed)}
          >
            {showSuppressed ? "Hide" : "Show"} suppressed ({suppressed.length})
          </button>
        )}
      </div>
      {suppressed.length > 0 && (
        <p className="muted" data-testid="vex-note">
          {suppressed.length} {suppressed.length === 1 ? "match is" : "matches are"} suppressed by VEX
          statements (not affected or fixed) and left out of the counts.
        </p>
      )}
      <div className="table-wrap">
        <table data-testid="matches">
          <caption className="visually-hidden">Vulnerability matches</caption>
          <thead>
            <tr>
              <th scope="col">Vulnerability</th>
              <th scope="col">Severity</th>
              <th scope="col">Package</th>
              <th scope="col">Fixed in</th>
              <th scope="col">VEX</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((m, i) => {
              const link = vulnerabilityLink(m);
              const href = link ? safeHref(link) : undefined;
              const id = m.vulnerability?.displayId || m.vulnerability?.id || "?";
              return (
                <tr
                  // biome-ignore lint/suspicious/noArrayIndexKey: a package may match one id in several locations
                  key={`${id}-${m.pkg?.name}-${i}`}
                  className={m.suppressed ? "suppressed" : undefined}
                  data-testid={m.suppressed ? "suppressed-match" : undefined}
                >
                  <td>
                    {href ? (
                      <a href={href} rel="noopener noreferrer" target="_blank">
                        {id}
                      </a>
                    ) : (
                      id
                    )}
                  </td>
                  <td>{severityName(m.vulnerability?.severity ?? 0)}</td>
                  <td>
                    {m.pkg?.name} {m.pkg?.version}
                  </td>
                  <td>{m.fix?.versions.join(", ")}</td>
                  <td>
                    {m.suppressed && <span className="badge ok">suppressed</span>} {vexNote(m)}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {rows.length === 0 && <p className="muted">No match passes the filters.</p>}
    </section>
  );
}
