import * as pep440 from "@renovatebot/pep440";
import semver from "semver";
import type { LibraryEcosystemName } from "../storage/library-store.js";
import { compareMavenVersions } from "./maven-version.js";

/** A JavaScript remediated build: `<release>-cgr.<N>`. */
const JS_REMEDIATED = /^(.+)-cgr\.(\d+)$/;

function splitJsRemediated(version: string): { base: string; build: number } {
  const m = JS_REMEDIATED.exec(version);
  if (m && semver.valid(m[1] as string) === m[1]) return { base: m[1] as string, build: Number(m[2]) };
  return { base: version, build: -1 };
}

function compareJs(a: string, b: string): number {
  const pa = splitJsRemediated(a);
  const pb = splitJsRemediated(b);
  return semver.compare(pa.base, pb.base) || Math.sign(pa.build - pb.build) || semver.compareBuild(a, b);
}

/**
 * Why `version` is not a version of `ecosystem`, or undefined when it is one: JAVASCRIPT wants
 * semver as npm writes it (`1.2.3`, `1.2.3-cgr.1`; no `v`), PYTHON a PEP 440 version, JAVA any
 * text without blanks (Maven orders every string).
 */
export function versionProblem(ecosystem: LibraryEcosystemName, version: string): string | undefined {
  switch (ecosystem) {
    case "JAVASCRIPT":
      return semver.valid(version) === version ? undefined : `"${version}" is not a semver version`;
    case "PYTHON":
      return pep440.valid(version) !== null ? undefined : `"${version}" is not a PEP 440 version`;
    case "JAVA":
      return /^\S+$/.test(version) ? undefined : `"${version}" is not a Maven version`;
  }
}

/**
 * A total order of the (valid) versions of one ecosystem, oldest first: Maven's ComparableVersion
 * for JAVA, PEP 440 for PYTHON (a local label such as `+cgr.1` or `+cu121` sorts right after its
 * release), semver for JAVASCRIPT, except that a remediated build `X-cgr.N` sorts right after X
 * (where semver would put the prerelease before it) so that remediated builds follow the release
 * they fix in every ecosystem. Versions the ecosystem deems equal (`1.0` and `1.0.0` in Maven)
 * fall back to their text, so no two distinct strings compare 0.
 */
export function compareVersions(ecosystem: LibraryEcosystemName, a: string, b: string): number {
  if (a === b) return 0;
  let result: number;
  switch (ecosystem) {
    case "JAVA":
      result = compareMavenVersions(a, b);
      break;
    case "PYTHON":
      result = pep440.compare(a, b);
      break;
    case "JAVASCRIPT":
      result = compareJs(a, b);
      break;
  }
  return Math.sign(result) || (a < b ? -1 : 1);
}

/**
 * The CUDA version of a PyPI build, from its local version label: `2.3.0+cu121` → `12.1`
 * (`cuNNN`: the last digit is the minor version). "" for other versions and ecosystems.
 */
export function cudaVersionOf(ecosystem: LibraryEcosystemName, version: string): string {
  if (ecosystem !== "PYTHON") return "";
  const plus = version.indexOf("+");
  if (plus < 0) return "";
  for (const segment of version
    .slice(plus + 1)
    .toLowerCase()
    .split(/[._-]/)) {
    const m = /^cu(\d{2,4})$/.exec(segment);
    if (m) return cudaFromDigits(m[1] as string);
  }
  return "";
}

/**
 * The `cudaVersion` filter as stored (`12.1`), from `12.1`, `cu121` or `121`; undefined when it is
 * none of those.
 */
export function normalizeCudaVersion(text: string): string | undefined {
  const value = text.trim().toLowerCase();
  const dotted = /^(\d{1,3})\.(\d)$/.exec(value);
  if (dotted) return `${Number(dotted[1])}.${dotted[2]}`;
  const digits = /^(?:cu)?(\d{2,4})$/.exec(value);
  return digits ? cudaFromDigits(digits[1] as string) : undefined;
}

function cudaFromDigits(digits: string): string {
  return `${Number(digits.slice(0, -1))}.${digits.slice(-1)}`;
}
