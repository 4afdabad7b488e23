import { create } from "@bufbuild/protobuf";
import { type Repo, RepoSchema } from "../../gen/platform/registry/v1/repos_tags_pb.js";
import type { Repo as V2Repo } from "../../gen/platform/registry/v2/repos_pb.js";

/**
 * The v1 repo of a v2 repo and its readme. Catalog tier, bundles, aliases, active tags,
 * sync_config and custom_overlay stay empty: Wharf stores none of them.
 */
export function repoV1(repo: V2Repo, readme: string): Repo {
  return create(RepoSchema, {
    id: repo.uid,
    name: repo.name,
    description: repo.description,
    readme,
    ...(repo.createTime ? { createTime: repo.createTime } : {}),
  });
}
