import type { registry } from "wharf/sdk";

/** One package of an image's SBOM. */
export type SbomPackage = registry.SbomPackage;

/**
 * The packages whose name, version, license or purl contains `text` (case-insensitive, surrounding
 * blanks ignored); all of them for blank text. Order is kept.
 */
export function filterPackages(packages: readonly SbomPackage[], text: string): SbomPackage[] {
  const needle = text.trim().toLowerCase();
  if (needle === "") return [...packages];
  return packages.filter((p) =>
    [p.name, p.version, p.license, p.purl].some((value) => value.toLowerCase().includes(needle)),
  );
}
