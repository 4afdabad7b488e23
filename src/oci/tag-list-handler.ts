import { ociError } from "./oci-errors.js";
import { authorize, type Exchange, existingRepo, type RegistryDeps, sendJson } from "./registry-request.js";

/**
 * GET `/v2/<name>/tags/list?n=&last=`: tag names in byte order after `last`, at most `n` (all
 * without `n`), with a `Link: <…>; rel="next"` header when more follow.
 */
export async function listTags(deps: RegistryDeps, ex: Exchange, name: string): Promise<void> {
  const { resolved } = await authorize(deps, ex, name, "pull");
  const repo = existingRepo(resolved);
  const nParam = ex.url.searchParams.get("n");
  const last = ex.url.searchParams.get("last") ?? undefined;
  let n: number | undefined;
  if (nParam !== null) {
    n = Number(nParam);
    if (!/^\d+$/.test(nParam) || !Number.isSafeInteger(n)) {
      throw ociError(
        "PAGINATION_NUMBER_INVALID",
        `n must be a non-negative integer, got "${nParam.slice(0, 40)}"`,
      );
    }
  }
  const limit = n === undefined ? Number.MAX_SAFE_INTEGER : n + 1;
  const names =
    n === 0 ? [] : await deps.content.tagNames(repo.uid, { ...(last ? { after: last } : {}), limit });
  const headers: Record<string, string> = {};
  if (n !== undefined && names.length > n) {
    names.length = n;
    const next = new URLSearchParams({ n: String(n), last: names.at(-1) as string });
    headers.link = `</v2/${name}/tags/list?${next}>; rel="next"`;
  }
  sendJson(ex, { name, tags: names }, headers);
}
