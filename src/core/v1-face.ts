import { clone, create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import type { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import { type UIDPFilter, UIDPFilterSchema } from "../gen/platform/common/v2/uidp_pb.js";
import type { RequestContext } from "./context.js";
import { DomainError, isDomainError } from "./errors.js";
import { MAX_PAGE_SIZE } from "./list.js";
import { requireUidp } from "./uidp.js";

/**
 * The v1 API is a second face over the v2 services (docs/adr/0030): a v1 handler translates its
 * request into the v2 one, calls the v2 handler with the same RequestContext (so capability
 * checks, validation, events and errors are the v2 ones), and translates the answer back. These
 * are the three conventions every v1 face shares.
 */

/**
 * Most items an unpaged v1 list returns. A v1 list gathers every v2 page; past this many it fails
 * FAILED_PRECONDITION, naming the v2 list to use, rather than answering a silently cut list.
 */
export const MAX_V1_LIST_ITEMS = 10_000;

/** The v2 page size a v1 list gathers with: the largest a v2 List serves, for the fewest reads. */
export const V2_GATHER_PAGE_SIZE = MAX_PAGE_SIZE;

/** What one v2 list page is, reduced to what gathering needs. */
export interface V2Page<T> {
  items: T[];
  nextPageToken: string;
}

/**
 * Gathers every page of a v2 list into one array, for the v1 list shape `{items: [...]}` without
 * paging. `fetchPage` is called with `""` first, then with each `nextPageToken` until it is empty.
 * Throws FAILED_PRECONDITION when more than MAX_V1_LIST_ITEMS would be answered; `v2Path` names the
 * paged v2 list in that message.
 */
export async function allV2Pages<T>(
  v2Path: string,
  fetchPage: (pageToken: string) => Promise<V2Page<T>>,
): Promise<T[]> {
  const items: T[] = [];
  let pageToken = "";
  do {
    const page = await fetchPage(pageToken);
    items.push(...page.items);
    if (items.length > MAX_V1_LIST_ITEMS) {
      throw new DomainError(
        Code.FailedPrecondition,
        `Precondition failed: this v1 list would answer more than ${MAX_V1_LIST_ITEMS} items; narrow it with filters or use the paged ${v2Path}`,
        { reason: "V1_LIST_TOO_LARGE" },
      );
    }
    pageToken = page.nextPageToken;
  } while (pageToken !== "");
  return items;
}

/** The paging fields of one v2 list request while a v1 list gathers every page. */
export interface V2Paging {
  pageSize: number;
  pageToken: string;
}

/**
 * Every item of a v2 list, for an unpaged v1 list ({@link allV2Pages}, so past MAX_V1_LIST_ITEMS
 * it fails naming `v2Path`): `fetchPage` runs the v2 list handler with `paging` spread into its
 * request (V2_GATHER_PAGE_SIZE per page), and `itemsOf` picks the answer's list field.
 */
export function everyV2Item<P extends { nextPageToken?: string }, T>(
  v2Path: string,
  fetchPage: (paging: V2Paging) => Promise<P>,
  itemsOf: (page: P) => T[] | undefined,
): Promise<T[]> {
  return allV2Pages(v2Path, async (pageToken) => {
    const page = await fetchPage({ pageSize: V2_GATHER_PAGE_SIZE, pageToken });
    return { items: itemsOf(page) ?? [], nextPageToken: page.nextPageToken ?? "" };
  });
}

/**
 * Runs a v2 Get and answers undefined when it fails NOT_FOUND: in v1 a filter on `id` replaces
 * Get, and a resource that does not exist is an empty 200 list, not a 404. Every other error
 * (PERMISSION_DENIED included) is rethrown unchanged.
 */
export async function foundOrNothing<T>(get: () => Promise<T>): Promise<T | undefined> {
  try {
    return await get();
  } catch (err) {
    if (isDomainError(err) && err.code === Code.NotFound) return undefined;
    throw err;
  }
}

/** The v1 list answer for an optional single result: `[found]` or `[]`. */
export function itemsOf<T>(found: T | undefined): T[] {
  return found === undefined ? [] : [found];
}

/**
 * The v2 UIDPFilter of a v1 list that has an `id` filter beside `uidp`: `id` joins `uidp.ids`, so
 * the v2 List, which shows only what the caller may list, answers the one resource or nothing (a
 * v1 id filter never bypasses the List's capability filter the way a Get would). `id` must be a
 * UIDP (INVALID_ARGUMENT on `field`, the v1 request's name for it). Undefined when nothing can
 * match (`id` is not among the `uidp.ids` given): the v1 answer is then no items.
 */
export function withIdFilter(uidp: UIDPFilter | undefined, id: string, field = "id"): UIDPFilter | undefined {
  const filter = uidp ? clone(UIDPFilterSchema, uidp) : create(UIDPFilterSchema);
  if (id === "") return filter;
  requireUidp(field, id);
  if (filter.ids.length > 0 && !filter.ids.includes(id)) return undefined;
  filter.ids = [id];
  return filter;
}

/**
 * The v1 answer to a filter on `id` (v1's Get), through the v2 Get `get`: its result, or undefined
 * when the resource does not exist OR the caller may not list it. A v1 List is unscoped, so the
 * transport has not done what it does before a scoped v2 Get; this does it first: `id` must be a
 * UIDP (INVALID_ARGUMENT on `id`) and the caller must hold every one of `capabilities` there, else
 * the answer is no items, exactly as a v1 list filtered to `id` through the v2 List
 * ({@link withIdFilter}) answers it: another organization's caller learns nothing about existence.
 */
export async function scopedGetOrNothing<T>(
  ctx: RequestContext,
  id: string,
  capabilities: readonly Capability[],
  get: () => Promise<T>,
): Promise<T | undefined> {
  requireUidp("id", id);
  if (!(await ctx.access.has(id, capabilities))) return undefined;
  return foundOrNothing(get);
}
