import type { ServiceHandlers } from "../../core/service.js";
import type { Registry } from "../../gen/platform/registry/v1/registry_pb.js";
import type { ImagesService } from "../../gen/platform/registry/v2/images_pb.js";
import type { ReposService } from "../../gen/platform/registry/v2/repos_pb.js";
import type { TagsService } from "../../gen/platform/registry/v2/tags_pb.js";
import type { Store } from "../../storage/store.js";
import { createImagesV1Handlers } from "./images-v1-handlers.js";
import { createReposV1Handlers } from "./repos-v1-handlers.js";
import { createTagsV1Handlers } from "./tags-v1-handlers.js";

/** The v2 registry handlers the v1 repo, tag and image RPCs are a face over. */
export interface RegistryV2Handlers {
  repos: ServiceHandlers<typeof ReposService>;
  tags: ServiceHandlers<typeof TagsService>;
  images: ServiceHandlers<typeof ImagesService>;
}

/** The v1 Registry RPCs of repos, tags, tag history, architectures and size. */
export type RegistryV1RepoTagHandlers = Pick<
  ServiceHandlers<typeof Registry>,
  | "listRepos"
  | "createRepo"
  | "updateRepo"
  | "deleteRepo"
  | "listTags"
  | "createTag"
  | "updateTag"
  | "deleteTag"
  | "listTagHistory"
  | "getArchs"
  | "getSize"
>;

/**
 * The repo, tag, tag history, architectures and size RPCs of the v1 Registry service (its other
 * RPCs are bound beside these in the composition root), built over the v2 handlers `v2` so that
 * checks, rules, errors and events are the v2 ones. `store` serves the v1-only reads (tag history,
 * the repo a create collides with).
 */
export function createRegistryV1Handlers(
  v2: RegistryV2Handlers,
  store: Pick<Store, "repos" | "tags">,
): RegistryV1RepoTagHandlers {
  return {
    ...createReposV1Handlers(v2.repos, store),
    ...createTagsV1Handlers(v2.tags, store),
    ...createImagesV1Handlers(v2.images),
  };
}
