/** Previous / next buttons for page-token lists. */
export function TokenPager({
  page,
  nextToken,
  onNext,
  onPrevious,
}: {
  /** 1-based. */
  page: number;
  /** "" on the last page. */
  nextToken: string;
  onNext: (token: string) => void;
  onPrevious: () => void;
}) {
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" className="secondary" disabled={page <= 1} onClick={onPrevious}>
        Previous
      </button>
      <span>Page {page}</span>
      <button type="button" className="secondary" disabled={!nextToken} onClick={() => onNext(nextToken)}>
        Next
      </button>
    </nav>
  );
}
