import { create } from "@bufbuild/protobuf";
import { requireUidp } from "../../core/uidp.js";
import { type UIDPFilter, UIDPFilterSchema } from "../../gen/platform/common/v2/uidp_pb.js";

/**
 * The v2 UIDPFilter of a v1 list: `uidp` (when the v1 request has one), narrowed to exactly `id`
 * when the v1 filter names one (`field` is the v1 field, named in INVALID_ARGUMENT when `id` is not
 * a uid), and to the direct children of `childrenOf` when given.
 *
 * A v1 filter on `id` goes through the v2 List rather than the v2 Get: the List keeps only what the
 * caller may list, so a resource that is missing or out of the caller's reach is an empty 200 (the
 * v1 convention), while a v2 Get handler trusts the transport to have checked its scope.
 */
export function v1UidpFilter(
  uidp: UIDPFilter | undefined,
  id: { field: string; value: string },
  childrenOf = "",
): UIDPFilter {
  const filter = create(UIDPFilterSchema, uidp ?? {});
  if (id.value !== "") filter.ids = [requireUidp(id.field, id.value)];
  if (childrenOf !== "") filter.childrenOf = childrenOf;
  return filter;
}
