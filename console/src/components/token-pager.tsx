import type { TokenPages } from "../lib/use-token-pages";

/** Previous / next buttons for a page-token list paged by {@link useTokenPages}. */
export function TokenPager({
  pages,
  nextToken,
}: {
  pages: TokenPages;
  /** "" on the last page. */
  nextToken: string;
}) {
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" className="secondary" disabled={pages.page <= 1} onClick={pages.previous}>
        Previous
      </button>
      <span>Page {pages.page}</span>
      <button type="button" className="secondary" disabled={!nextToken} onClick={() => pages.next(nextToken)}>
        Next
      </button>
    </nav>
  );
}
