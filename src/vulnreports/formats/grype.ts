import type { CvssScore, FixState, ScannerInfo, VulnMatch } from "../report-model.js";
import { VulnReportFormatError } from "./format-error.js";
import {
  asObject,
  distinct,
  type JsonObject,
  optArray,
  optNumber,
  optObject,
  optString,
  optStrings,
  parseTime,
} from "./json-values.js";
import { normalizeSeverity } from "./severity.js";

const FIX_STATES: Record<string, FixState> = {
  fixed: "FIXED",
  "not-fixed": "NOT_FIXED",
  "wont-fix": "WONT_FIX",
};

function grypeCvss(vuln: JsonObject, what: string): CvssScore[] {
  return optArray(vuln, "cvss", what).flatMap((entry, i) => {
    const cvss = asObject(entry, `${what}.cvss[${i}]`);
    const score = optNumber(
      optObject(cvss, "metrics", `${what}.cvss[${i}]`) ?? {},
      "baseScore",
      `${what}.cvss[${i}]`,
    );
    if (score === undefined) return [];
    return [
      {
        score,
        version: optString(cvss, "version", `${what}.cvss[${i}]`),
        vector: optString(cvss, "vector", `${what}.cvss[${i}]`),
        source: optString(cvss, "source", `${what}.cvss[${i}]`),
      },
    ];
  });
}

/**
 * One element of Grype's `matches[]` as a VulnMatch: the CVE of a GHSA/CGA match (its
 * `relatedVulnerabilities`) becomes an alias, and lends its description and CVSS when the match
 * itself has none.
 */
export function grypeMatch(value: unknown, index: number): VulnMatch {
  const what = `matches[${index}]`;
  const match = asObject(value, what);
  const vuln = optObject(match, "vulnerability", what);
  const artifact = optObject(match, "artifact", what);
  if (!vuln || !artifact) throw new VulnReportFormatError(`${what} needs a vulnerability and an artifact`);
  const id = optString(vuln, "id", `${what}.vulnerability`);
  if (id === "") throw new VulnReportFormatError(`${what}.vulnerability.id is missing`);
  const related = optArray(match, "relatedVulnerabilities", what).map((r, i) =>
    asObject(r, `${what}.relatedVulnerabilities[${i}]`),
  );
  let cvss = grypeCvss(vuln, `${what}.vulnerability`);
  let description = optString(vuln, "description", `${what}.vulnerability`);
  for (const [i, r] of related.entries()) {
    if (cvss.length === 0) cvss = grypeCvss(r, `${what}.relatedVulnerabilities[${i}]`);
    if (description === "") description = optString(r, "description", `${what}.relatedVulnerabilities[${i}]`);
  }
  const fix = optObject(vuln, "fix", `${what}.vulnerability`) ?? {};
  const urls = optStrings(vuln, "urls", `${what}.vulnerability`);
  const dataSource = optString(vuln, "dataSource", `${what}.vulnerability`);
  return {
    vulnerabilityId: id,
    aliases: distinct(
      related.map((r, i) => optString(r, "id", `${what}.relatedVulnerabilities[${i}]`)),
    ).filter((alias) => alias !== id),
    severity: normalizeSeverity(optString(vuln, "severity", `${what}.vulnerability`)),
    cvss,
    description,
    relatedUrls: distinct(urls.length > 0 ? urls : dataSource.startsWith("http") ? [dataSource] : []),
    fixVersions: optStrings(fix, "versions", `${what}.vulnerability.fix`),
    fixState: FIX_STATES[optString(fix, "state", `${what}.vulnerability.fix`)] ?? "UNKNOWN",
    packageName: optString(artifact, "name", `${what}.artifact`),
    packageVersion: optString(artifact, "version", `${what}.artifact`),
    packageType: optString(artifact, "type", `${what}.artifact`),
    purl: optString(artifact, "purl", `${what}.artifact`),
    locations: distinct(
      optArray(artifact, "locations", `${what}.artifact`).map((l, i) =>
        optString(
          asObject(l, `${what}.artifact.locations[${i}]`),
          "path",
          `${what}.artifact.locations[${i}]`,
        ),
      ),
    ),
  };
}

/**
 * The scanner of a Grype report from its `descriptor`: version, and the database build time from
 * `db.built` or (Grype v6) `db.status.built`.
 */
export function grypeScanner(descriptorValue: unknown): ScannerInfo {
  const descriptor = asObject(descriptorValue, "descriptor");
  const db = optObject(descriptor, "db", "descriptor") ?? {};
  const status = optObject(db, "status", "descriptor.db") ?? {};
  const built = typeof db.built === "string" ? db.built : optString(status, "built", "descriptor.db.status");
  const info: ScannerInfo = { name: "GRYPE", version: optString(descriptor, "version", "descriptor") };
  const dbBuildTime = parseTime(built);
  if (dbBuildTime !== undefined) info.dbBuildTime = dbBuildTime;
  return info;
}
