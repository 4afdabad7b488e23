import { failedPrecondition, notFound } from "../../../core/errors.js";
import type { ServiceHandlers } from "../../../core/service.js";
import type { SbomService } from "../../../gen/platform/registry/v2/sbom_pb.js";
import type { Store } from "../../../storage/store.js";
import { validateDigest } from "../../names.js";
import type { SbomPackage, SbomReader } from "../supply-chain.js";
import { SbomFormatError } from "./sbom-errors.js";

/** What SbomService is built from (the composition root provides it). */
export interface SbomServiceDeps {
  store: Pick<Store, "repos" | "manifests">;
  /** The SBOM reader (`createSbomReader`), shared with the pull-policy evaluator. */
  sboms: SbomReader;
}

/** The precondition violation type when an image's SBOM cannot be read. */
export const SBOM_UNREADABLE = "SBOM_UNREADABLE";

function matches(pkg: SbomPackage, query: string): boolean {
  return pkg.name.toLowerCase().includes(query) || pkg.purl.toLowerCase().includes(query);
}

/**
 * SbomService.GetSbom: the packages of an image's newest SBOM, filtered by `query` (name or purl,
 * case-insensitive). NOT_FOUND for a missing repo or manifest, or an image without an SBOM (the
 * message says how to attach one); FAILED_PRECONDITION {@link SBOM_UNREADABLE} naming the referrer
 * and the problem when the SBOM cannot be read.
 */
export function createSbomService(deps: SbomServiceDeps): ServiceHandlers<typeof SbomService> {
  return {
    async getSbom(req) {
      validateDigest(req.digest);
      if (!(await deps.store.repos.get(req.repoUid))) throw notFound("repo", req.repoUid);
      if (!(await deps.store.manifests.has(req.repoUid, req.digest)))
        throw notFound("manifest", `${req.repoUid}@${req.digest}`);
      let sbom: Awaited<ReturnType<SbomReader["sbom"]>>;
      try {
        sbom = await deps.sboms.sbom(req.repoUid, req.digest);
      } catch (err) {
        if (err instanceof SbomFormatError)
          throw failedPrecondition(SBOM_UNREADABLE, err.message, `${req.repoUid}@${req.digest}`);
        throw err;
      }
      if (sbom === undefined) {
        throw notFound(
          "sbom",
          `${req.repoUid}@${req.digest} has no SBOM attached (attach an SPDX 2.3 or CycloneDX 1.5/1.6 JSON SBOM as a referrer: cosign attest --type spdxjson, or oras attach --artifact-type application/spdx+json)`,
        );
      }
      const query = req.query.trim().toLowerCase();
      const packages = query === "" ? sbom.packages : sbom.packages.filter((p) => matches(p, query));
      return { format: sbom.format, referrer: sbom.referrer, packages };
    },
  };
}
