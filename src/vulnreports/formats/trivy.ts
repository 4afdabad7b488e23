import type { CvssScore, FixState, VulnMatch } from "../report-model.js";
import { VulnReportFormatError } from "./format-error.js";
import {
  asObject,
  distinct,
  type JsonObject,
  optNumber,
  optObject,
  optString,
  optStrings,
} from "./json-values.js";
import { normalizeSeverity } from "./severity.js";

// trivy-db pkg/types/status.go: what each status says about a fix.
const FIX_STATES: Record<string, FixState> = {
  fixed: "FIXED",
  will_not_fix: "WONT_FIX",
  affected: "NOT_FIXED",
  fix_deferred: "NOT_FIXED",
  under_investigation: "NOT_FIXED",
};

/** "3.1" from `CVSS:3.1/…`, else `fallback`. */
function versionOfVector(vector: string, fallback: string): string {
  const match = /^CVSS:(\d+\.\d+)\//.exec(vector);
  return match?.[1] ?? fallback;
}

function trivyCvss(vuln: JsonObject, what: string): CvssScore[] {
  const bySource = optObject(vuln, "CVSS", what) ?? {};
  const scores: CvssScore[] = [];
  for (const source of Object.keys(bySource)) {
    const entry = asObject(bySource[source], `${what}.CVSS.${source}`);
    const at = `${what}.CVSS.${source}`;
    const v40 = optNumber(entry, "V40Score", at);
    if (v40 !== undefined)
      scores.push({ score: v40, version: "4.0", vector: optString(entry, "V40Vector", at), source });
    const v3 = optNumber(entry, "V3Score", at);
    const v3Vector = optString(entry, "V3Vector", at);
    if (v3 !== undefined)
      scores.push({ score: v3, version: versionOfVector(v3Vector, "3.0"), vector: v3Vector, source });
    const v2 = optNumber(entry, "V2Score", at);
    if (v2 !== undefined)
      scores.push({ score: v2, version: "2.0", vector: optString(entry, "V2Vector", at), source });
  }
  return scores;
}

/**
 * One element of a Trivy Result's `Vulnerabilities[]` as a VulnMatch. `packageType` is the Result's
 * `Type` (alpine, gobinary, jar, …). `FixedVersion` is a comma list; without a `Status` (older
 * Trivy) a fixed version means FIXED.
 */
export function trivyVulnerability(value: unknown, where: string, packageType: string): VulnMatch {
  const vuln = asObject(value, where);
  const id = optString(vuln, "VulnerabilityID", where);
  if (id === "") throw new VulnReportFormatError(`${where}.VulnerabilityID is missing`);
  const fixVersions = distinct(
    optString(vuln, "FixedVersion", where)
      .split(",")
      .map((v) => v.trim()),
  );
  const status = optString(vuln, "Status", where);
  const pkgPath = optString(vuln, "PkgPath", where);
  const identifier = optObject(vuln, "PkgIdentifier", where) ?? {};
  return {
    vulnerabilityId: id,
    aliases: distinct(optStrings(vuln, "VendorIDs", where)).filter((alias) => alias !== id),
    severity: normalizeSeverity(optString(vuln, "Severity", where)),
    cvss: trivyCvss(vuln, where),
    description: optString(vuln, "Description", where) || optString(vuln, "Title", where),
    relatedUrls: distinct([optString(vuln, "PrimaryURL", where), ...optStrings(vuln, "References", where)]),
    fixVersions,
    fixState:
      status === "" ? (fixVersions.length > 0 ? "FIXED" : "UNKNOWN") : (FIX_STATES[status] ?? "UNKNOWN"),
    packageName: optString(vuln, "PkgName", where),
    packageVersion: optString(vuln, "InstalledVersion", where),
    packageType,
    purl: optString(identifier, "PURL", `${where}.PkgIdentifier`),
    locations: pkgPath === "" ? [] : [pkgPath],
  };
}
