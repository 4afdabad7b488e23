import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { toDate } from "../../lib/format";

/** A tag whose end of life is this close (or past) is shown. */
export const EOL_NEAR_DAYS = 90;
export const DAY_MS = 86_400_000;

/** The fields of a v1 EolTag the panel reads. */
export interface EolTagLike {
  id: string;
  name: string;
  mainPackageName: string;
  mainPackageVersion?:
    | { exists: boolean; version: string; eolBroken: boolean; eolDate?: Timestamp }
    | undefined;
}

/** A tag of the panel: where its release cycle stands. */
export interface EolRow {
  tagUid: string;
  repoUid: string;
  /** The repo's name once known (its uid until then). */
  repo: string;
  tag: string;
  product: string;
  cycle: string;
  /** The cycle's EOL date (ms), undefined when declared EOL without a date. */
  eolTime: number | undefined;
  past: boolean;
}

/** The parent repo uid of a tag uid (`<repo uid>/<16 hex>`). */
function repoOf(tagUid: string): string {
  return tagUid.slice(0, tagUid.lastIndexOf("/"));
}

/**
 * Of `tags`, those past end of life at `now` (EOL date reached, or declared EOL without a date) and
 * those within {@link EOL_NEAR_DAYS} days of it; past first, then by EOL date, soonest first. Tags
 * whose rule matched no cycle, or whose cycle has no EOL date, are left out.
 */
export function eolRowsOf(tags: readonly EolTagLike[], now: number): EolRow[] {
  const rows: EolRow[] = [];
  for (const t of tags) {
    const version = t.mainPackageVersion;
    if (!version?.exists) continue;
    const eolTime = toDate(version.eolDate)?.getTime();
    const past = version.eolBroken || (eolTime !== undefined && eolTime <= now);
    if (!past && (eolTime === undefined || eolTime - now > EOL_NEAR_DAYS * DAY_MS)) continue;
    const repoUid = repoOf(t.id);
    rows.push({
      tagUid: t.id,
      repoUid,
      repo: repoUid,
      tag: t.name,
      product: t.mainPackageName,
      cycle: version.version,
      eolTime,
      past,
    });
  }
  return rows.sort((a, b) => Number(b.past) - Number(a.past) || (a.eolTime ?? 0) - (b.eolTime ?? 0));
}
