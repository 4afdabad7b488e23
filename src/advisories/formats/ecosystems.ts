/** How one OSV ecosystem maps onto an advisory's artifact. */
export interface EcosystemKind {
  /** `apk` for apk distributions, `os-package` for other distributions, `library` for languages. */
  artifactType: string;
  /** The component type a scanner reports for this ecosystem (Grype/Syft names), or "". */
  componentType: string;
}

const APK: EcosystemKind = { artifactType: "apk", componentType: "apk" };
const OS: EcosystemKind = { artifactType: "os-package", componentType: "" };
const lib = (componentType: string): EcosystemKind => ({ artifactType: "library", componentType });

// OSV ecosystems (ossf/osv-schema ecosystems.txt), by the name before any ":<release>" suffix.
const KNOWN: Record<string, EcosystemKind> = {
  Chainguard: APK,
  Wolfi: APK,
  Alpine: APK,
  MinimOS: APK,
  Debian: OS,
  Ubuntu: OS,
  "Red Hat": OS,
  "Rocky Linux": OS,
  AlmaLinux: OS,
  SUSE: OS,
  openSUSE: OS,
  "Photon OS": OS,
  Mageia: OS,
  openEuler: OS,
  "Azure Linux": OS,
  Echo: OS,
  Android: OS,
  Linux: OS,
  Go: lib("go-module"),
  npm: lib("npm"),
  PyPI: lib("python"),
  Maven: lib("java-archive"),
  "crates.io": lib("rust-crate"),
  RubyGems: lib("gem"),
  NuGet: lib("dotnet"),
  Packagist: lib("php-composer"),
  Pub: lib("dart-pub"),
  Hex: lib("hex"),
  Hackage: lib("hackage"),
  CRAN: lib("r-package"),
  Bioconductor: lib("r-package"),
  SwiftURL: lib("swift"),
  ConanCenter: lib("conan"),
  "GitHub Actions": lib("github-action"),
  Bitnami: lib("binary"),
  "OSS-Fuzz": lib("binary"),
  GIT: lib("binary"),
};

/** The ecosystem's kind, or undefined for an ecosystem OSV does not define. */
export function ecosystemKind(ecosystem: string): EcosystemKind | undefined {
  return KNOWN[ecosystemBase(ecosystem)];
}

/** `Alpine:v3.18` → `Alpine`. */
export function ecosystemBase(ecosystem: string): string {
  const colon = ecosystem.indexOf(":");
  return colon < 0 ? ecosystem : ecosystem.slice(0, colon);
}

/** True for the ecosystems Chainguard's exporter writes, whose `related` lists aliases (security-data §2.4). */
export function isChainguardEcosystem(ecosystem: string): boolean {
  const base = ecosystemBase(ecosystem);
  return base === "Chainguard" || base === "Wolfi";
}
