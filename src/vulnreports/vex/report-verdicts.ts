import type { Store } from "../../storage/store.js";
import { imageKey } from "../../storage/vex-store.js";
import type { VulnMatchRecord, VulnReportRow } from "../../storage/vuln-report-store.js";
import { type VexVerdict, vexVerdicts } from "./applicability.js";

/** Per match of a report (in its order), VEX's verdict, or undefined where no statement covers it. */
export type ReportVerdicts = readonly (VexVerdict | undefined)[];

/**
 * The VEX verdicts of the matches of each report in `rows` (`matches` by report uid), reading the
 * applicable statements of all their images in one store read. Keyed by report uid.
 */
export async function reportVerdicts(
  store: Pick<Store, "vex">,
  rows: readonly Pick<VulnReportRow, "uid" | "repoUid" | "digest">[],
  matches: ReadonlyMap<string, readonly VulnMatchRecord[]>,
): Promise<Map<string, ReportVerdicts>> {
  const out = new Map<string, ReportVerdicts>();
  if (rows.length === 0) return out;
  const statements = await store.vex.applicable(rows.map((r) => ({ repoUid: r.repoUid, digest: r.digest })));
  for (const r of rows) {
    out.set(
      r.uid,
      vexVerdicts(matches.get(r.uid) ?? [], statements.get(imageKey(r.repoUid, r.digest)) ?? []),
    );
  }
  return out;
}

/** The matches VEX does not suppress. */
export function unsuppressed(
  matches: readonly VulnMatchRecord[],
  verdicts: ReportVerdicts | undefined,
): VulnMatchRecord[] {
  return matches.filter((_, i) => !verdicts?.[i]?.suppressed);
}
