import { pageRequestOf, toUidpFilter } from "../../core/api-convert.js";
import { type PageTokenCodec, paginate } from "../../core/list.js";
import { namedResourceList } from "../../core/list-specs.js";
import type { ServiceHandlers } from "../../core/service.js";
import { Capability } from "../../gen/platform/capabilities/capabilities_pb.js";
import type { Registry } from "../../gen/platform/registry/v1/registry_pb.js";
import type { EolTagFilter } from "../../storage/eol-store.js";
import type { TagRow } from "../../storage/registry-store.js";
import type { Store } from "../../storage/store.js";
import { DEFAULT_EOL_GRACE_MONTHS, eolStateAt } from "./eol-status.js";
import { eolTagMessage } from "./eol-tag-mapping.js";
import { resolveTagEol } from "./tag-eol-resolver.js";

/** What ListEolTags is built from. */
export interface EolTagsServiceDeps {
  /** Its tags list and the rules and cycles they follow. */
  store: Pick<Store, "eol">;
  pageTokens: PageTokenCodec;
  /** Grace period after a cycle's EOL date, in calendar months (default 6; `--eol-grace-months`). */
  eolGraceMonths?: number;
}

const TAG_LIST = namedResourceList<TagRow>();

/** An int64 page size as the paging kit's number (anything past the maximum clamps the same way). */
function pageSizeOf(size: bigint): number {
  return size > 1_000_000n ? 1_000_000 : Number(size);
}

/**
 * The ListEolTags RPC of the v1 Registry service (v1 only, ADR 0031): the tags in the caller's
 * CAP_TAG_LIST scopes that an EOL rule matches, paged by tag uid, each with its release cycle's
 * state at `ctx.clock.now()` and the configured grace period. The same tag store and EOL data
 * drive the v2 `deprecated` flag.
 */
export function createEolTagsHandlers(
  deps: EolTagsServiceDeps,
): Pick<ServiceHandlers<typeof Registry>, "listEolTags"> {
  const { store } = deps;
  const graceMonths = deps.eolGraceMonths ?? DEFAULT_EOL_GRACE_MONTHS;
  return {
    async listEolTags(req, ctx) {
      const within = await ctx.access.scopesWith([Capability.CAP_TAG_LIST]);
      const filter: EolTagFilter = { uidp: toUidpFilter(req.uidp) };
      if (req.name) filter.name = req.name;
      if (req.excludeDates) filter.excludeDates = true;
      if (req.excludeEpochs) filter.excludeEpochs = true;
      const request = pageRequestOf({
        pageSize: pageSizeOf(req.pageSize),
        pageToken: req.pageToken,
        orderBy: "",
        skip: 0,
      });
      const page = await paginate(request, filter, TAG_LIST, deps.pageTokens, (window) =>
        store.eol.listTags({ ...filter, within }, window),
      );
      const eol = await resolveTagEol(store, page.items);
      const now = ctx.clock.now();
      const items = page.items.flatMap((tag) => {
        const found = eol.get(tag.uid);
        // A rule changed between the list and this read: leave the tag out rather than guess.
        if (found === undefined) return [];
        return [eolTagMessage(tag, found, eolStateAt(found.cycle, now, graceMonths))];
      });
      return { items, nextPageToken: page.nextPageToken };
    },
  };
}
