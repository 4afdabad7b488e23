/**
 * An SBOM Wharf cannot read: not JSON, cut short, too large, too many packages, not SPDX 2.3 or
 * CycloneDX 1.5/1.6 (bare, in an in-toto statement or in a DSSE envelope), or a malformed field.
 * `message` says what was found, where, and what was expected.
 */
export class SbomFormatError extends Error {
  override readonly name = "SbomFormatError";
}
