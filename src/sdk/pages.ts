import { Code } from "@connectrpc/connect";
import { WharfApiError } from "./errors.js";

/** A List method of a client: takes a request with a page token, answers a page with the next one. */
export type ListMethod<Req extends { pageToken?: string }, Res extends { nextPageToken: string }, Opts> = (
  request: Req,
  options?: Opts,
) => Promise<Res>;

/** The element type of a page's list field (`Repo` for `ListReposResponse`). */
export type ItemOf<Res> = {
  [K in Exclude<keyof Res, `$${string}`>]: Res[K] extends readonly (infer T)[] ? T : never;
}[Exclude<keyof Res, `$${string}`>];

/**
 * Every page of a List call, first to last: calls `method` with `request`, then again with each
 * `nextPageToken` until the server answers none. `request.pageSize` is kept on every call. A
 * server that repeats a page token (a loop) ends the iteration with an INTERNAL WharfApiError.
 *
 * @example for await (const page of pages(client.registry.repos.listRepos, { pageSize: 50 })) …
 */
export async function* pages<Req extends { pageToken?: string }, Res extends { nextPageToken: string }, Opts>(
  method: ListMethod<Req, Res, Opts>,
  request: Req,
  options?: Opts,
): AsyncGenerator<Res, void, undefined> {
  const seen = new Set<string>();
  let pageToken = request.pageToken ?? "";
  for (;;) {
    const page = await method({ ...request, pageToken }, options);
    yield page;
    if (!page.nextPageToken) return;
    if (seen.has(page.nextPageToken)) {
      throw new WharfApiError({ code: Code.Internal, message: "the server repeated a page token" });
    }
    seen.add(page.nextPageToken);
    pageToken = page.nextPageToken;
  }
}

/**
 * Every item of a List call across all its pages (see {@link pages}): the elements of each page's
 * list field (`repos` of ListReposResponse…; every List response has exactly one).
 *
 * @example for await (const repo of listAll(client.registry.repos.listRepos, {})) console.log(repo.name);
 */
export async function* listAll<
  Req extends { pageToken?: string },
  Res extends { nextPageToken: string },
  Opts,
>(
  method: ListMethod<Req, Res, Opts>,
  request: Req,
  options?: Opts,
): AsyncGenerator<ItemOf<Res>, void, undefined> {
  for await (const page of pages(method, request, options)) {
    // `$unknown` (unknown binary fields) is an array too, and no list field.
    const list = Object.entries(page).find(([key, value]) => !key.startsWith("$") && Array.isArray(value));
    if (!list) throw new TypeError("listAll: the response has no list field");
    yield* list[1] as unknown as ItemOf<Res>[];
  }
}
