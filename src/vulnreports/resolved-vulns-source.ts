import type {
  ResolvedDay,
  ResolvedVulnerability,
  ResolvedVulnsSource,
} from "../advisories/resolved-vulns-source.js";
import type { SeverityRow } from "../storage/advisory-store.js";
import type { Store } from "../storage/store.js";
import { type DayVulnerability, resolvedVulnerabilities } from "./daily-vulns.js";

/**
 * The data of the advisory feed's ResolvedVulns, from vulnerability reports and tag history
 * (see `resolvedVulnerabilities`): per day, what the tags' images had the day before and no longer
 * have, merged over the tags. Each vulnerability is named by the id of an imported advisory that
 * lists one of its ids as an alias (a CGA id), else by the report's own id; its other ids are its
 * aliases. Its severities are that advisory's, else those of the imported metadata of one of its
 * ids, else none (a report's severity level carries no vector to score).
 */
export function createResolvedVulnsSource(
  store: Pick<Store, "tags" | "vulnReports" | "advisories">,
): ResolvedVulnsSource {
  return {
    async resolvedVulns(query, signal): Promise<ResolvedDay[]> {
      signal.throwIfAborted();
      const days = await resolvedVulnerabilities(store, {
        repoUid: query.repoUid,
        tagNames: query.tags,
        fromDay: query.firstDay,
        toDay: query.lastDay,
      });
      const named = new Map<string, ResolvedVulnerability>();
      const byDay = new Map<number, Map<string, ResolvedVulnerability>>();
      for (const { day, resolved } of days) {
        const bucket = byDay.get(day) ?? new Map<string, ResolvedVulnerability>();
        byDay.set(day, bucket);
        for (const vulnerability of resolved) {
          signal.throwIfAborted();
          let entry = named.get(vulnerability.id);
          if (entry === undefined) {
            entry = await describe(store, vulnerability);
            named.set(vulnerability.id, entry);
          }
          bucket.set(entry.id, entry);
        }
      }
      return [...byDay]
        .sort(([a], [b]) => a - b)
        .map(([day, bucket]) => ({ day, vulnerabilities: [...bucket.values()] }));
    },
  };
}

async function describe(
  store: Pick<Store, "advisories">,
  vulnerability: DayVulnerability,
): Promise<ResolvedVulnerability> {
  const ids = [...new Set([vulnerability.id, ...vulnerability.aliases])];
  const advisory = (await store.advisories.byOrigin("", ids)).find((a) => a.deleteTime === undefined);
  const id = advisory?.advisoryId ?? vulnerability.id;
  return {
    id,
    aliases: ids.filter((alias) => alias !== id),
    severities: advisory?.severities.length ? advisory.severities : await metadataSeverities(store, ids),
  };
}

async function metadataSeverities(
  store: Pick<Store, "advisories">,
  ids: readonly string[],
): Promise<SeverityRow[]> {
  for (const id of ids) {
    const metadata = await store.advisories.getMetadata(id);
    if (metadata && metadata.severities.length > 0) return metadata.severities;
  }
  return [];
}
