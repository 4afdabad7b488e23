/**
 * A report that is not one Wharf reads: not JSON, cut short, an unknown document, or a known one in
 * a version Wharf does not read. `message` says what was found and what was expected.
 */
export class VulnReportFormatError extends Error {
  override readonly name = "VulnReportFormatError";
}

/** What every format error ends with: the formats Wharf reads. */
export const EXPECTED_FORMATS =
  "expected Grype JSON (grype -o json), Trivy JSON with SchemaVersion 2 (trivy -f json), or a cosign " +
  "vulnerability attestation (predicate https://cosign.sigstore.dev/attestation/vuln/v1, bare, in an " +
  "in-toto statement or in a DSSE envelope)";
