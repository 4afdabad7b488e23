import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

/** One entry of node-releases' release schedule (`data/release-schedule/release-schedule.json`). */
interface ScheduleEntry {
  start: string;
  end: string;
  lts?: string;
  maintenance?: string;
  codename?: string;
}

/** A Node.js cycle in the legacy endoflife.date shape. */
export interface NodeCycle {
  cycle: string;
  releaseDate: string;
  eol: string;
  lts: string | false;
  support: string | false;
  codename: string | null;
}

/**
 * The real Node.js release schedule carried by the installed `node-releases` package, converted to
 * the legacy endoflife.date shape `wharf import eol` reads: `v20` → cycle `20`, `start` →
 * releaseDate, `end` → eol, `lts` (date or false), `maintenance` → support, `codename`.
 */
export function nodeReleasesAsEndOfLife(): NodeCycle[] {
  const require = createRequire(import.meta.url);
  const path = require.resolve("node-releases/data/release-schedule/release-schedule.json");
  const schedule = JSON.parse(readFileSync(path, "utf8")) as Record<string, ScheduleEntry>;
  return Object.entries(schedule).map(([version, entry]) => ({
    cycle: version.replace(/^v/, ""),
    releaseDate: entry.start,
    eol: entry.end,
    lts: entry.lts ?? false,
    support: entry.maintenance ?? false,
    codename: entry.codename ?? null,
  }));
}
