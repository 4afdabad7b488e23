/**
 * The kinds of tag names the v1 tag list can leave out (`exclude_referrers`, `exclude_dates`,
 * `exclude_epochs`): OCI referrer fallback tags (`sha256-<hex>` and its `.sig`/`.att` forms),
 * dated tags (`…-20yymmdd`) and epoch tags (`…-r<N>`).
 */
const REFERRER = /^sha256-[0-9a-f]{64}/;
const DATED = /-20\d{6}$/;
const EPOCH = /-r\d+$/;

/** Which tag name kinds a v1 tag list leaves out. */
export interface TagNameExclusions {
  excludeReferrers: boolean;
  excludeDates: boolean;
  excludeEpochs: boolean;
}

/** True when tag `name` is of a kind `exclusions` leaves out. */
export function isExcludedTagName(name: string, exclusions: TagNameExclusions): boolean {
  return (
    (exclusions.excludeReferrers && REFERRER.test(name)) ||
    (exclusions.excludeDates && DATED.test(name)) ||
    (exclusions.excludeEpochs && EPOCH.test(name))
  );
}
