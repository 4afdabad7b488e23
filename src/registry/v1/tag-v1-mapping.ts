import { create } from "@bufbuild/protobuf";
import { type Tag, TagSchema } from "../../gen/platform/registry/v1/repos_tags_pb.js";
import type { Tag as V2Tag } from "../../gen/platform/registry/v2/tags_pb.js";

/** The v1 tag of a v2 tag: `last_updated` is the v2 `update_time`; bundles stay empty (not stored). */
export function tagV1(tag: V2Tag): Tag {
  return create(TagSchema, {
    id: tag.uid,
    name: tag.name,
    digest: tag.digest,
    deprecated: tag.deprecated,
    ...(tag.updateTime ? { lastUpdated: tag.updateTime } : {}),
  });
}
