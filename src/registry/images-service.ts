import { notFound } from "../core/errors.js";
import type { ServiceHandlers } from "../core/service.js";
import type { ImagesService } from "../gen/platform/registry/v2/images_pb.js";
import { describeImage } from "./image-description.js";
import { validateDigest } from "./names.js";
import type { RegistryServiceDeps } from "./service-deps.js";

/** The architecture GetSize reports when the request names none (the hosted service's default). */
const DEFAULT_ARCHITECTURE = "amd64";

/**
 * ImagesService: architectures and size of a stored image, derived from its manifests (see
 * `describeImage`). NOT_FOUND for a missing repo or manifest, or an architecture the image lacks.
 */
export function createImagesService(deps: RegistryServiceDeps): ServiceHandlers<typeof ImagesService> {
  return {
    async getArchitectures(req, ctx) {
      validateDigest(req.digest);
      const platforms = await describeImage(deps, req.repoUid, req.digest, ctx.signal);
      return { architectures: [...new Set(platforms.map((p) => p.architecture).filter(Boolean))] };
    },
    async getSize(req, ctx) {
      validateDigest(req.digest);
      const platforms = await describeImage(deps, req.repoUid, req.digest, ctx.signal);
      const single = platforms.length === 1 && req.architecture === "" ? platforms[0] : undefined;
      const architecture = req.architecture || DEFAULT_ARCHITECTURE;
      const platform = single ?? platforms.find((p) => p.architecture === architecture);
      if (!platform) {
        const available = platforms.map((p) => p.architecture).join(", ") || "none";
        throw notFound("architecture", `${req.digest} has no ${architecture} image (it has: ${available})`);
      }
      return { size: BigInt(platform.size), architecture: platform.architecture || architecture };
    },
  };
}
