/**
 * The contracts between the supply-chain parts of issue 37: trusted signing keys, signature
 * verification, VEX-aware vulnerability findings and SBOMs, which the pull-policy evaluator reads.
 * Each is implemented in its own module and joined by the composition root; the registry domain
 * depends only on these shapes (vulnerability reports live in `vulnreports/`, which imports the
 * registry, so the registry must not import it back).
 */

/** A public key an organization, folder or repo trusts to sign images (a `SigningKey` resource). */
export interface TrustedKey {
  /** `<parent uid>/<16 hex>`. */
  uid: string;
  /** Unique within its parent. */
  name: string;
  /** The group (organization or folder) or repo the key is registered at. */
  parentUid: string;
  /** The parent's registry path (`acme/prod`, `acme/prod/api`), for messages a person can act on. */
  parentPath: string;
  /** SPKI PEM, as registered (validated: ECDSA P-256/P-384, Ed25519 or RSA ≥ 2048). */
  publicKeyPem: string;
  createTime: number;
}

/** Which keys are trusted for a repo. */
export interface TrustedKeyring {
  /**
   * The keys registered at the repo and at each of its ancestors (its folders up to the
   * organization), nearest first. Reflects a key added or deleted by any process within seconds.
   */
  keysFor(repoUid: string): Promise<TrustedKey[]>;
}

/** How a signature was found. */
export type SignatureLayout = "cosign-tag" | "cosign-referrer" | "sigstore-bundle";

/** One recognised signature of an image, checked against the repo's trusted keys. */
export interface SignatureCheck {
  /** The digest of the manifest that carries the signature (the `.sig` tag's or the referrer's). */
  referrer: string;
  layout: SignatureLayout;
  /** The key that verified it; "" when none did. */
  keyUid: string;
  /** That key's name; "" when none did. */
  keyName: string;
  verified: boolean;
  /**
   * Why: "verified by key <name> trusted at <path>", or what failed ("payload names sha256:… not
   * this image", "no trusted key verifies it", "malformed signature annotation", …).
   */
  reason: string;
}

/** Finds and verifies the signatures of images. */
export interface SignatureVerifier {
  /**
   * Every recognised signature of `digest` in the repo (cosign `sha256-<hex>.sig` tag layout, OCI 1.1
   * referrers with simple-signing layers, Sigstore bundle referrers), each verified against
   * `keysFor(repo.uid)`. Empty when the image has none. Never throws for bad signature content
   * (that is a `verified: false` entry with its reason).
   */
  signatures(repo: { uid: string; name: string }, digest: string): Promise<SignatureCheck[]>;
  /**
   * Optional (added by the signatures part): the distinct keys whose signatures of `digest` verify,
   * nearest-trusted first: what a tag's summary and `requireSignature` need. Cheaper than
   * `signatures` when the repo trusts no key (nothing is read then).
   */
  verifiedSigners?(repo: { uid: string; name: string }, digest: string): Promise<VerifiedSigner[]>;
}

/** A key that verified a signature of an image (keyless: `keyUid` "", the certificate's identity). */
export interface VerifiedSigner {
  keyUid: string;
  keyName: string;
}

/** One vulnerability finding of an image, as a policy reads it. */
export interface ImageFinding {
  /** CVE-…, GHSA-…: the report's vulnerability id. */
  vulnerabilityId: string;
  /** UNKNOWN, NEGLIGIBLE, LOW, MEDIUM, HIGH or CRITICAL. */
  severity: string;
  /** Whether a fixed version exists (fix state FIXED). */
  fixable: boolean;
  packageName: string;
  packageVersion: string;
  /** The version that fixes it, when the report names one (messages say "fixed in …"). */
  fixedVersion?: string;
}

/** The vulnerabilities of images, VEX applied. */
export interface ImageVulnerabilities {
  /**
   * The unsuppressed findings of the current reports (every scanner) of `digest` in the repo, or
   * undefined when the image has no report at all. Matches a VEX statement marks `not_affected`
   * or `fixed` are left out.
   */
  unsuppressedFindings(repoUid: string, digest: string): Promise<ImageFinding[] | undefined>;
}

/** One package of an SBOM. */
export interface SbomPackage {
  name: string;
  version: string;
  /** "" when the SBOM gives none. */
  purl: string;
  /** SPDX license expression or name; "" when the SBOM gives none. */
  license: string;
}

/** An image's SBOM as read from its referrer. */
export interface ImageSbom {
  /** `SPDX-2.3`, `CycloneDX-1.5` or `CycloneDX-1.6`. */
  format: string;
  /** The digest of the referrer manifest it was read from. */
  referrer: string;
  packages: SbomPackage[];
}

/** Reads the SBOMs attached to images as referrers. */
export interface SbomReader {
  /** Whether `digest` has a recognised SBOM referrer in the repo (no parsing; cheap). */
  hasSbom(repoUid: string, digest: string): Promise<boolean>;
  /** The newest recognised SBOM of `digest`, parsed (size-capped), or undefined when it has none. */
  sbom(repoUid: string, digest: string): Promise<ImageSbom | undefined>;
}

/**
 * The store tables whose changes may change a supply-chain fact: a cache of policy decisions or of
 * signature checks drops its entries when a change-feed batch touches one of them (`touches`).
 * Each part adds its own table here when it lands.
 */
export const SUPPLY_CHAIN_TABLES: readonly string[] = [
  "manifests",
  "tags",
  "groups",
  "repos",
  "vuln_reports",
  "eol_cycles",
  "eol_rules",
  "trusted_keys",
  "pull_policies",
  "vex_statements",
];
