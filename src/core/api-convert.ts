import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import type { UIDPFilter } from "../gen/platform/common/v2/uidp_pb.js";
import type { AccessScopes } from "./context.js";
import { invalidArgument } from "./errors.js";
import type { PageRequest, UidpFilter } from "./list.js";
import { isUidp } from "./uidp.js";

/**
 * A protobuf Timestamp for a time in ms (undefined stays undefined): what `timestampFromMs` returns,
 * written as a literal because `create` costs about a microsecond per call (two per list item).
 */
export function toTimestamp(ms: number | undefined): Timestamp | undefined {
  if (ms === undefined) return undefined;
  const seconds = Math.floor(ms / 1000);
  return {
    $typeName: "google.protobuf.Timestamp",
    seconds: BigInt(seconds),
    nanos: (ms - seconds * 1000) * 1_000_000,
  };
}

/** Milliseconds of a protobuf Timestamp (undefined stays undefined). */
export function fromTimestamp(ts: Timestamp | undefined): number | undefined {
  return ts === undefined ? undefined : timestampDate(ts).getTime();
}

/**
 * The store's UidpFilter for an API UIDPFilter; every uid given must be a valid uidp
 * (INVALID_ARGUMENT on `uidp.<field>` otherwise).
 */
export function toUidpFilter(uidp: UIDPFilter | undefined): UidpFilter {
  if (!uidp) return {};
  const out: UidpFilter = {};
  const check = (field: string, uid: string): string => {
    if (!isUidp(uid)) throw invalidArgument(`uidp.${field}`, `"${uid}" is not a valid uid`);
    return uid;
  };
  if (uidp.ancestorsOf) out.ancestorsOf = check("ancestors_of", uidp.ancestorsOf);
  if (uidp.descendantsOf) out.descendantsOf = check("descendants_of", uidp.descendantsOf);
  if (uidp.childrenOf) out.childrenOf = check("children_of", uidp.childrenOf);
  if (uidp.inRoot) out.inRoot = true;
  if (uidp.ids.length > 0) out.ids = uidp.ids.map((id) => check("ids", id));
  return out;
}

/** The paging fields of any generated List request. */
export function pageRequestOf(req: {
  pageSize: number;
  pageToken: string;
  orderBy: string;
  skip: number;
}): PageRequest {
  return { pageSize: req.pageSize, pageToken: req.pageToken, orderBy: req.orderBy, skip: req.skip };
}

/** The JSON-able description of `within` for binding page tokens to the caller's view. */
export function scopesKey(scopes: AccessScopes): string[] | "all" {
  return scopes.all ? "all" : scopes.uids;
}
