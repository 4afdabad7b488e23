// `wharf import <kind> …`: the table of importers (the local ones, and `vulnreport`, which uploads to a
// server). Kept free of the store and the importers' code (each `run` loads its module), so that
// printing the usage loads none of it.
import { IMPORT_EOL_USAGE } from "./import-eol-usage.js";
import type { ImportIo } from "./import-progress.js";
import { IMPORT_VULNREPORT_USAGE } from "./usage.js";

export type { ImportIo } from "./import-progress.js";

/** One kind of `wharf import`: its word, a one-line summary for the usage, and its command. */
export interface ImportKind {
  kind: string;
  summary: string;
  /** Its usage lines, when not the local importers' `FILE… [--strict] [options]` form. */
  usage?: string;
  /** It talks to a server over the network: the local importers' options do not apply. */
  network?: true;
  /** Runs `wharf import <kind> <argv…>`; resolves to the exit code (0, 1 failed, 2 usage). */
  run(argv: string[], io: ImportIo): Promise<number>;
}

/** The importers, in the order the usage lists them. */
export const IMPORT_KINDS: readonly ImportKind[] = [
  {
    kind: "libraries",
    summary:
      "library versions from JSON lines {ecosystem, name, version, description, publishTime, sizeBytes, remediated}; artifacts are aggregated from them",
    run: async (argv, io) => (await import("./import-libraries.js")).runLibrariesImport(argv, io),
  },
  {
    kind: "advisories",
    summary:
      "advisories from OSV JSON (files, arrays, directories, all.json indexes, zip archives) and " +
      "Chainguard/Wolfi *.advisories.yaml (--namespace NS, default wolfi); CVE/GHSA records also " +
      "feed the vulnerability metadata",
    run: async (argv, io) =>
      (await import("./import-advisories.js")).runAdvisoryImport("advisories", argv, io),
  },
  {
    kind: "vulnmeta",
    summary: "upstream vulnerability metadata (summary, details, references, CVSS) from OSV JSON records",
    run: async (argv, io) => (await import("./import-advisories.js")).runAdvisoryImport("vulnmeta", argv, io),
  },
  {
    kind: "vulnreport",
    summary: "a vulnerability report of an image, uploaded to a running server",
    usage: IMPORT_VULNREPORT_USAGE,
    network: true,
    run: async (argv, io) => (await import("./import-vulnreport.js")).runVulnReportImport(argv, io),
  },
  {
    kind: "eol",
    summary: "end-of-life dates of a product's release cycles",
    usage: IMPORT_EOL_USAGE,
    run: async (argv, io) => (await import("./import-eol.js")).runEolImport(argv, io),
  },
];

/** The options every local importer takes (they open the store like `wharf gc`). */
export const LOCAL_IMPORT_OPTIONS_USAGE = `Options:
  --strict                the first rejected record is fatal: its file rolls back, exit 1
  --data-dir DIR          WHARF_DATA_DIR       data folder (default ./wharf-data)
  --database-url URL      WHARF_DATABASE_URL   postgres://… (default: SQLite in the data dir)

Each FILE is imported in one transaction (all of it or, on a fatal error, nothing); safe while
servers run. Invalid records are reported on stderr (file, location, field) and skipped; the last
line counts the records created, updated, unchanged and rejected.
`;

/** The usage lines of `wharf import` for the main usage text, one per kind. */
export function importUsage(kinds: readonly ImportKind[] = IMPORT_KINDS): string {
  return kinds
    .map((k) => k.usage ?? `  wharf import ${k.kind} FILE… [--strict] [options]\n${wrapSummary(k.summary)}`)
    .join("");
}

/**
 * Runs `wharf import <argv…>`: the kind named first runs with the rest. `--help`/`-h` (or no
 * arguments) print the kinds and the shared options; `<kind> --help` that kind's usage. An
 * unknown kind is a usage error (2).
 */
export async function runImport(
  argv: string[],
  io: ImportIo,
  kinds: readonly ImportKind[] = IMPORT_KINDS,
): Promise<number> {
  const [word, ...rest] = argv;
  const help = (text: string) => {
    io.stdout.write(`Usage:\n${text}\n${LOCAL_IMPORT_OPTIONS_USAGE}`);
    return 0;
  };
  if (word === undefined) {
    io.stderr.write(`Usage:\n${importUsage(kinds)}\n${LOCAL_IMPORT_OPTIONS_USAGE}`);
    return 2;
  }
  if (word === "--help" || word === "-h" || word === "help") return help(importUsage(kinds));
  const kind = kinds.find((k) => k.kind === word);
  if (!kind) {
    const known = kinds.map((k) => k.kind).join(", ") || "none";
    io.stderr.write(`wharf import: unknown kind "${word}" (known: ${known})\n`);
    return 2;
  }
  const end = rest.indexOf("--");
  const flags = end < 0 ? rest : rest.slice(0, end);
  if (flags.includes("--help") || flags.includes("-h")) {
    if (!kind.network) return help(importUsage([kind]));
    io.stdout.write(`Usage:\n${importUsage([kind])}`);
    return 0;
  }
  return kind.run(rest, io);
}

function wrapSummary(summary: string): string {
  const indent = " ".repeat(40);
  const lines: string[] = [];
  let line = "";
  for (const word of summary.split(/\s+/)) {
    if (line && indent.length + line.length + 1 + word.length > 100) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines.map((l) => `${indent}${l}\n`).join("");
}
