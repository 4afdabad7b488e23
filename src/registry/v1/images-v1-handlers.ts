import { create } from "@bufbuild/protobuf";
import type { ServiceHandlers } from "../../core/service.js";
import type { Registry } from "../../gen/platform/registry/v1/registry_pb.js";
import {
  GetArchitecturesRequestSchema,
  GetSizeRequestSchema,
  type ImagesService,
} from "../../gen/platform/registry/v2/images_pb.js";

/**
 * The v1 architectures and size RPCs of the Registry service: the v2 ImagesService answers with
 * v1 names (`archs`, `arch`).
 */
export function createImagesV1Handlers(
  images: ServiceHandlers<typeof ImagesService>,
): Pick<ServiceHandlers<typeof Registry>, "getArchs" | "getSize"> {
  return {
    async getArchs(req, ctx) {
      const answer = await images.getArchitectures(
        create(GetArchitecturesRequestSchema, { repoUid: req.repoId, digest: req.digest }),
        ctx,
      );
      return { archs: answer.architectures ?? [] };
    },
    async getSize(req, ctx) {
      const answer = await images.getSize(
        create(GetSizeRequestSchema, { repoUid: req.repoId, digest: req.digest, architecture: req.arch }),
        ctx,
      );
      return { size: BigInt(answer.size ?? 0), arch: answer.architecture ?? "" };
    },
  };
}
