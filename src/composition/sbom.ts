import type { WharfConfig } from "../config/config.js";
import { createSbomReader } from "../registry/supply-chain/sbom/sbom-reader.js";
import type { SbomReader } from "../registry/supply-chain/supply-chain.js";
import type { BlobDriver } from "../storage/blobs/blob-driver.js";
import type { Store } from "../storage/store.js";

/** What the SBOM reader is built from. */
export interface SbomDeps {
  config: Pick<WharfConfig, "sbomMaxBytes">;
  store: Store;
  blobs: BlobDriver;
}

/**
 * The one SBOM reader of the process (ADR 0060): SbomService answers from it and the pull-policy
 * evaluator asks it `hasSbom`, so both share its recognition and parse caches. SBOMs larger than
 * `--sbom-max-mb` are refused. Starts nothing.
 */
export function buildSbomReader(deps: SbomDeps): SbomReader {
  return createSbomReader({
    store: deps.store,
    blobs: deps.blobs,
    limits: { maxBytes: deps.config.sbomMaxBytes },
  });
}
