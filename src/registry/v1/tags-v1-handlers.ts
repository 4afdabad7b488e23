import { create } from "@bufbuild/protobuf";
import { fromTimestamp, toTimestamp } from "../../core/api-convert.js";
import { invalidArgument } from "../../core/errors.js";
import type { ServiceHandlers } from "../../core/service.js";
import { parentOf } from "../../core/uidp.js";
import { everyV2Item, foundOrNothing, withIdFilter } from "../../core/v1-face.js";
import { v1Resource } from "../../core/v1-face-convert.js";
import type { Registry } from "../../gen/platform/registry/v1/registry_pb.js";
import { TagSchema } from "../../gen/platform/registry/v1/repos_tags_pb.js";
import {
  CreateTagRequestSchema,
  DeleteTagRequestSchema,
  GetTagRequestSchema,
  ListTagsRequestSchema,
  type TagsService,
  TagSchema as V2TagSchema,
} from "../../gen/platform/registry/v2/tags_pb.js";
import type { Store } from "../../storage/store.js";
import { tagHistoryPage } from "../tag-history.js";
import { isExcludedTagName } from "./tag-name-kinds.js";

/**
 * A v1 tag: the v2 tag by table (`uid` → `id`, `update_time` → `last_updated`); bundles stay empty
 * (not stored). A PUT is no v2 Update (the tag moves by CreateTag), so nothing is updatable.
 */
const TAG_V1 = v1Resource({
  v1: TagSchema,
  v2: V2TagSchema,
  updatable: [],
  renames: { update_time: "last_updated" },
});
const tagV1 = TAG_V1.toV1;

/**
 * The v1 tag RPCs of the Registry service, as a face over the v2 TagsService handlers
 * (docs/adr/0030). A v1 PUT is the v2 CreateTag of the same name (which moves the tag); the
 * `exclude_*` name filters are applied to the v2 answer. ListTagHistory is v1-only: it reads the
 * history the registry's Tag History API reads (`tagHistoryPage`) from `store`.
 */
export function createTagsV1Handlers(
  tags: ServiceHandlers<typeof TagsService>,
  store: Pick<Store, "tags">,
): Pick<
  ServiceHandlers<typeof Registry>,
  "listTags" | "createTag" | "updateTag" | "deleteTag" | "listTagHistory"
> {
  return {
    async listTags(req, ctx) {
      const uidp = withIdFilter(req.uidp, req.id);
      if (!uidp) return { items: [] };
      const found = await everyV2Item(
        "/registry/v2/tags",
        (paging) =>
          tags.listTags(
            create(ListTagsRequestSchema, {
              uidp,
              name: req.name,
              digest: req.digest,
              ...(req.updatedSince ? { updatedSince: req.updatedSince } : {}),
              includeReferrers: !req.excludeReferrers,
              includeDates: !req.excludeDates,
              includeEpochs: !req.excludeEpochs,
              ...paging,
            }),
            ctx,
          ),
        (page) => page.tags,
      );
      const listed = found.map((t) => create(V2TagSchema, t));
      return { items: listed.filter((t) => !isExcludedTagName(t.name, req)).map(tagV1) };
    },

    async createTag(req, ctx) {
      const tag = await tags.createTag(
        create(CreateTagRequestSchema, {
          parent: req.repoId,
          tag: {
            name: req.tag?.name ?? "",
            digest: req.tag?.digest ?? "",
            deprecated: req.tag?.deprecated ?? false,
          },
        }),
        ctx,
      );
      return tagV1(create(V2TagSchema, tag));
    },

    async updateTag(req, ctx) {
      const current = create(
        V2TagSchema,
        await tags.getTag(create(GetTagRequestSchema, { uid: req.id }), ctx),
      );
      // The name is the tag's identity in its repo; another name is another tag (CreateTag).
      if (req.name !== current.name) {
        throw invalidArgument("name", `a tag cannot be renamed: the body must name "${current.name}"`);
      }
      const moved = await tags.createTag(
        create(CreateTagRequestSchema, {
          parent: parentOf(req.id),
          tag: { name: current.name, digest: req.digest, deprecated: req.deprecated },
        }),
        ctx,
      );
      return tagV1(create(V2TagSchema, moved));
    },

    async deleteTag(req, ctx) {
      await tags.deleteTag(create(DeleteTagRequestSchema, { uid: req.id }), ctx);
      return {};
    },

    async listTagHistory(req, ctx) {
      const tag = await foundOrNothing(() =>
        tags.getTag(create(GetTagRequestSchema, { uid: req.parentId }), ctx),
      );
      if (!tag) return { items: [] };
      const rows = await tagHistoryPage(store, {
        repoUid: parentOf(req.parentId),
        tagName: tag.name ?? "",
        start: fromTimestamp(req.start),
        end: fromTimestamp(req.end),
      });
      return { items: rows.map((r) => ({ updateTimestamp: toTimestamp(r.updateTime), digest: r.digest })) };
    },
  };
}
