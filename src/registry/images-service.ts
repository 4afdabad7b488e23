import type { ServiceDeps } from "../api/deps.js";
import { notFound } from "../core/errors.js";
import type { ServiceHandlers } from "../core/service.js";
import type { ImagesService } from "../gen/platform/registry/v2/images_pb.js";
import { validateDigest } from "./names.js";

/**
 * ImagesService: architectures and size of a stored image. Until the registry data plane stores
 * manifests, every digest is NOT_FOUND (after checking the repo exists and the digest is valid).
 */
export function createImagesService(deps: ServiceDeps): ServiceHandlers<typeof ImagesService> {
  const { store } = deps;
  async function requireManifest(repoUid: string, digest: string): Promise<never> {
    validateDigest(digest);
    if (!(await store.repos.get(repoUid))) throw notFound("repo", repoUid);
    throw notFound("manifest", `${repoUid}@${digest}`);
  }
  return {
    async getArchitectures(req) {
      return requireManifest(req.repoUid, req.digest);
    },
    async getSize(req) {
      return requireManifest(req.repoUid, req.digest);
    },
  };
}
