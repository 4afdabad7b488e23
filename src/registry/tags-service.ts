import { fromTimestamp, pageRequestOf, toUidpFilter } from "../core/api-convert.js";
import { failedPrecondition, notFound } from "../core/errors.js";
import { paginate } from "../core/list.js";
import { namedResourceList, pageEnvelope } from "../core/list-specs.js";
import type { ServiceHandlers } from "../core/service.js";
import { newChildUid, parentOf, requireUidp } from "../core/uidp.js";
import { recordedMutation } from "../events/recorded-mutation.js";
import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import { TagSchema, type TagsService } from "../gen/platform/registry/v2/tags_pb.js";
import type { TagFilter, TagRow } from "../storage/registry-store.js";
import type { Store } from "../storage/store.js";
import { withRegistryLock } from "./data-plane/registry-lock.js";
import { withEolDeprecation } from "./eol/eol-deprecation.js";
import { refuseImmutableTag } from "./immutability/tag-guard.js";
import { tagMessage } from "./mapping.js";
import { validateDigest, validateTagName } from "./names.js";
import type { RegistryServiceDeps } from "./service-deps.js";
import { withVerifiedSigners } from "./supply-chain/signatures/verified-signers.js";
import { deleteTagRecorded } from "./tag-deletion.js";
import { restoreTag, restoreTarget } from "./tag-restore.js";
import { refuseWriteInUpstreamNamespace } from "./upstreams/upstream-namespace.js";

/** Why CreateTag and RestoreTag refuse an upstream's namespace. */
const TAGS_BY_CACHE = "its tags follow the upstream (delete a tag to evict it)";

const TAG_LIST = namedResourceList<TagRow>();

/**
 * TagsService: list, read, create-or-move and delete tags; every digest change is recorded. Each
 * CreateTag is a `tag.created` event of the repo, or `tag.updated` when the tag already existed.
 * List and Get show `deprecated` as the stored flag OR the tag's EOL cycle having ended
 * (`withEolDeprecation`, ADR 0031); CreateTag answers the stored flag. A tag an immutability rule
 * protects is not moved by CreateTag, deleted by DeleteTag or moved by RestoreTag:
 * FAILED_PRECONDITION `TAG_IMMUTABLE` (ADR 0045). RestoreTag is `tag.updated`, or `tag.created`
 * when it brings a deleted tag back; a restore to the digest the tag already names records nothing.
 * List and Get fill `verifiedSigners` from the signature verifier when the deps have one.
 */
export function createTagsService(deps: RegistryServiceDeps): ServiceHandlers<typeof TagsService> {
  const { store } = deps;
  return {
    async listTags(req, ctx) {
      const within = await ctx.access.scopesWith([Capability.CAP_TAG_LIST]);
      const filter: TagFilter = { uidp: toUidpFilter(req.uidp) };
      if (req.name) filter.name = req.name;
      if (req.digest) {
        validateDigest(req.digest);
        filter.digest = req.digest;
      }
      const since = fromTimestamp(req.updatedSince);
      if (since !== undefined) filter.updatedSince = since;
      // An exact name is asked for by name: the kinds hidden by default apply to listings only.
      if (!req.name) {
        if (!req.includeReferrers) filter.hideReferrers = true;
        if (!req.includeDates) filter.hideDates = true;
        if (!req.includeEpochs) filter.hideEpochs = true;
      }
      const page = await paginate(pageRequestOf(req), filter, TAG_LIST, deps.pageTokens, (window) =>
        store.tags.list({ ...filter, within }, window),
      );
      const tags = await withEolDeprecation(store, page.items, ctx.clock.now());
      return {
        tags: await withVerifiedSigners(deps.signatures, tags.map(tagMessage)),
        ...pageEnvelope(page),
      };
    },

    async getTag(req, ctx) {
      const row = await store.tags.get(req.uid);
      if (!row) throw notFound("tag", req.uid);
      const [shown = row] = await withEolDeprecation(store, [row], ctx.clock.now());
      const [message = tagMessage(shown)] = await withVerifiedSigners(deps.signatures, [tagMessage(shown)]);
      return message;
    },

    async createTag(req, ctx) {
      const input = req.tag;
      validateTagName(input?.name ?? "");
      validateDigest(input?.digest ?? "");
      const putTag = async (tx: Store) => {
        await withRegistryLock(tx, "shared");
        if (!(await tx.repos.get(req.parent))) throw notFound("repo", req.parent);
        await refuseWriteInUpstreamNamespace(tx, parentOf(req.parent), TAGS_BY_CACHE);
        // A tag must resolve: pointing it at a manifest the registry does not hold would break pulls.
        if (!(await tx.manifests.has(req.parent, input?.digest ?? ""))) {
          throw failedPrecondition(
            "MANIFEST_MISSING",
            `the repo holds no manifest ${input?.digest}; push the image first`,
            input?.digest,
          );
        }
        const existed = await tx.tags.getByName(req.parent, input?.name ?? "");
        const row = await tx.tags.put({
          repoUid: req.parent,
          name: input?.name ?? "",
          digest: input?.digest ?? "",
          deprecated: input?.deprecated ?? false,
          newUid: newChildUid(req.parent),
          now: ctx.clock.now(),
          beforeMove: (tag) => refuseImmutableTag(tx, tag),
        });
        return { row, message: tagMessage(row), moved: existed !== undefined };
      };
      const { message } = await recordedMutation(deps, ctx, putTag, ({ row, message, moved }) => ({
        resource: "tag",
        verb: moved ? "updated" : "created",
        subject: row.uid,
        group: row.repoUid,
        schema: TagSchema,
        body: message,
      }));
      return message;
    },

    async deleteTag(req, ctx) {
      if (!(await deleteTagRecorded(deps, ctx, req.uid))) throw notFound("tag", req.uid);
      return {};
    },

    async restoreTag(req, ctx) {
      requireUidp("uid", req.uid);
      const target = restoreTarget(req.digest, fromTimestamp(req.time));
      await refuseWriteInUpstreamNamespace(store, parentOf(parentOf(req.uid)), TAGS_BY_CACHE);
      const { row } = await recordedMutation(
        deps,
        ctx,
        (tx) => restoreTag(tx, { uid: req.uid, target, now: ctx.clock.now() }),
        ({ row, change }) =>
          change === "none"
            ? undefined
            : {
                resource: "tag",
                verb: change,
                subject: row.uid,
                group: row.repoUid,
                schema: TagSchema,
                body: tagMessage(row),
              },
      );
      return tagMessage(row);
    },
  };
}
