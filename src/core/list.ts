import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { Clock } from "./clock.js";
import { invalidArgument } from "./errors.js";

/** Default page size of every List RPC. */
export const DEFAULT_PAGE_SIZE = 50;
/** Larger page sizes are clamped to this. */
export const MAX_PAGE_SIZE = 200;
/** A page token older than this silently restarts the query from the first page. */
export const PAGE_TOKEN_TTL_MS = 3 * 24 * 60 * 60 * 1000;

/** Columns a List may order by; every resource supports a subset. */
export type SortField = "uid" | "name" | "create_time" | "update_time" | "version";

/** A parsed `order_by`; `uid` in the same direction always breaks ties. */
export interface OrderBy {
  field: SortField;
  desc: boolean;
}

/** The sort key of the last row of a page: its value in the order column, and its uid. */
export interface Cursor {
  value: string | number;
  uid: string;
}

/** What a store must return for one page: rows in order, at most `limit` + 1 of them. */
export interface ListWindow {
  order: OrderBy;
  /** Rows strictly after this key in `order` (absent on the first page). */
  after?: Cursor;
  /** Rows wanted; the store returns up to `limit + 1` so the caller can tell whether more exist. */
  limit: number;
  /** Rows to skip after `after` (SQL OFFSET). */
  skip: number;
}

/** A store's answer to a ListWindow. */
export interface ListSlice<T> {
  rows: T[];
  /** Every row matching the filter, ignoring the window. */
  total: bigint;
}

/** Hierarchy filter of the API (`uidp.*` query parameters). All set fields combine with AND. */
export interface UidpFilter {
  /** Strict ancestors of this uidp. */
  ancestorsOf?: string;
  /** This uidp and all its descendants. */
  descendantsOf?: string;
  /** Direct children of this uidp. */
  childrenOf?: string;
  /** Root-level rows only. */
  inRoot?: boolean;
  /** Exactly these uidps. */
  ids?: string[];
}

/** The paging fields common to every List request. */
export interface PageRequest {
  pageSize: number;
  pageToken: string;
  orderBy: string;
  skip: number;
}

/** One page of a List response. */
export interface Page<T> {
  items: T[];
  nextPageToken: string;
  totalCount: bigint;
  skipped: number;
}

const FIELD_ALIASES: Record<string, SortField> = {
  uid: "uid",
  name: "name",
  create_time: "create_time",
  createtime: "create_time",
  created_at: "create_time",
  createdat: "create_time",
  update_time: "update_time",
  updatetime: "update_time",
  updated_at: "update_time",
  updatedat: "update_time",
  version: "version",
};

/**
 * Parses `order_by` (`<field> [asc|desc]`, snake_case or camelCase, `created_at` accepted for
 * `create_time`). Empty → `fallback`. A field outside `allowed`, or a malformed value, throws
 * INVALID_ARGUMENT on `order_by`.
 */
export function parseOrderBy(raw: string, allowed: readonly SortField[], fallback: OrderBy): OrderBy {
  const text = raw.trim();
  if (text === "") return fallback;
  const parts = text.split(/\s+/);
  const direction = (parts[1] ?? "asc").toLowerCase();
  const field = FIELD_ALIASES[(parts[0] ?? "").toLowerCase()];
  if (parts.length > 2 || (direction !== "asc" && direction !== "desc")) {
    throw invalidArgument("order_by", `"${raw}" must be "<field> [asc|desc]"`);
  }
  if (!field || !allowed.includes(field)) {
    throw invalidArgument("order_by", `unknown order field "${parts[0]}"; allowed: ${allowed.join(", ")}`);
  }
  return { field, desc: direction === "desc" };
}

/** Query hashes by the query's plain JSON text (see `queryHash`); cleared when full. */
const recentHashes = new Map<string, string>();
const MAX_RECENT_HASHES = 1000;

interface TokenPayload {
  /** Hash of the query (filters + order) the token belongs to. */
  q: string;
  /** Cursor: order value and uid of the last row returned. */
  v: string | number;
  u: string;
  /** Issue time, ms. */
  t: number;
  /** Rows skipped by `skip` so far, accumulated across pages. */
  s: number;
  /**
   * Rows of the result before the cursor (skipped or served) up to and including the cursor's row;
   * absent in tokens issued before it existed.
   */
  p?: number;
}

/**
 * Encodes and verifies opaque, tamper-evident page tokens (HMAC-SHA256 with a secret shared by all
 * server processes). A token is bound to the hash of its query.
 */
export class PageTokenCodec {
  constructor(
    private readonly secret: Uint8Array,
    private readonly clock: Clock,
  ) {}

  /** Stable hash of a query description (filters + order); key order of objects does not matter. */
  static queryHash(query: unknown): string {
    // Memoized by the plain JSON text, which is cheap to build: equal texts are equal JSON values,
    // so they have the same canonical form. (Values plain JSON cannot write, bigints, skip the memo.)
    let text: string | undefined;
    try {
      text = JSON.stringify(query);
    } catch {
      text = undefined;
    }
    let hash = text === undefined ? undefined : recentHashes.get(text);
    if (hash === undefined) {
      hash = createHash("sha256").update(canonicalJson(query)).digest("base64url").slice(0, 22);
      if (text !== undefined) {
        if (recentHashes.size >= MAX_RECENT_HASHES) recentHashes.clear();
        recentHashes.set(text, hash);
      }
    }
    return hash;
  }

  encode(queryHash: string, cursor: Cursor, skipped: number, position?: number): string {
    const payload: TokenPayload = {
      q: queryHash,
      v: cursor.value,
      u: cursor.uid,
      t: this.clock.now(),
      s: skipped,
      ...(position === undefined ? {} : { p: position }),
    };
    const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
    return `${body}.${this.sign(body)}`;
  }

  /**
   * Decodes `token` for the query `queryHash`. Returns undefined for an expired token (the query
   * restarts from the first page). Throws INVALID_ARGUMENT on `page_token` for a malformed or
   * tampered token, or one issued for another query.
   */
  decode(
    token: string,
    queryHash: string,
  ): { cursor: Cursor; skipped: number; position?: number } | undefined {
    const [body, mac, extra] = token.split(".");
    if (!body || !mac || extra !== undefined || !this.verify(body, mac)) {
      throw invalidArgument("page_token", "invalid page token");
    }
    let payload: TokenPayload;
    try {
      payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as TokenPayload;
    } catch {
      throw invalidArgument("page_token", "invalid page token");
    }
    if (payload.q !== queryHash) {
      throw invalidArgument(
        "page_token",
        "page token was issued for a different query (filters or order_by changed)",
      );
    }
    if (this.clock.now() - payload.t > PAGE_TOKEN_TTL_MS) return undefined;
    const position = typeof payload.p === "number" ? { position: payload.p } : {};
    return { cursor: { value: payload.v, uid: payload.u }, skipped: payload.s, ...position };
  }

  private sign(body: string): string {
    return createHmac("sha256", this.secret).update(body).digest("base64url").slice(0, 22);
  }

  private verify(body: string, mac: string): boolean {
    const expected = Buffer.from(this.sign(body));
    const given = Buffer.from(mac);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}

/** How one resource's List pages: its sortable fields, its default order and how to read a sort key. */
export interface ListSpec<T> {
  allowedOrder: readonly SortField[];
  defaultOrder: OrderBy;
  sortValue(row: T, field: SortField): string | number;
  uidOf(row: T): string;
}

/**
 * Runs one page of a List: validates and clamps paging fields, decodes the token, asks `fetch`
 * for the window and builds the next token. `query` describes the filters (anything JSON-able);
 * together with the order it binds the token.
 */
export async function paginate<T>(
  request: PageRequest,
  query: unknown,
  spec: ListSpec<T>,
  codec: PageTokenCodec,
  fetch: (window: ListWindow) => Promise<ListSlice<T>>,
): Promise<Page<T>> {
  if (request.pageSize < 0) throw invalidArgument("page_size", "must not be negative");
  if (request.skip < 0) throw invalidArgument("skip", "must not be negative");
  const limit = request.pageSize === 0 ? DEFAULT_PAGE_SIZE : Math.min(request.pageSize, MAX_PAGE_SIZE);
  const order = parseOrderBy(request.orderBy, spec.allowedOrder, spec.defaultOrder);
  const queryHash = PageTokenCodec.queryHash({ query, order });
  const resumed = request.pageToken ? codec.decode(request.pageToken, queryHash) : undefined;
  const slice = await fetch({
    order,
    limit,
    skip: request.skip,
    ...(resumed ? { after: resumed.cursor } : {}),
  });
  const items = slice.rows.slice(0, limit);
  // `skip` counts only rows that were there to skip: all of it when a row follows them, else at
  // most the rows left after the cursor (the total minus the rows up to the cursor).
  const before = resumed ? (resumed.position ?? 0) : 0;
  const left = Math.max(0, Number(slice.total) - before);
  const skippedNow = items.length > 0 ? request.skip : Math.min(request.skip, left);
  const skipped = (resumed?.skipped ?? 0) + skippedNow;
  const last = items[items.length - 1];
  const position = before + skippedNow + items.length;
  const nextPageToken =
    slice.rows.length > limit && last !== undefined
      ? codec.encode(
          queryHash,
          { value: spec.sortValue(last, order.field), uid: spec.uidOf(last) },
          skipped,
          position,
        )
      : "";
  return { items, nextPageToken, totalCount: slice.total, skipped };
}

function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === "bigint") return v.toString();
    if (v && typeof v === "object" && !Array.isArray(v)) {
      return Object.fromEntries(
        Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)),
      );
    }
    return v;
  });
}
