// `wharf import <kind> …`: the table of importers (the local ones, and `vulnreport`, which uploads to a
// server). Kept free of the store and the importers' code (each `run` loads its module), so that
// printing the usage loads none of it.
import type { Command } from "commander";
import { commandIndex } from "../command-index.js";
import { addConfigOptions, STORE_FIELDS } from "./config-options.js";
import type { ImportIo, ParsedImport } from "./import-progress.js";

export type { ImportIo, ParsedImport } from "./import-progress.js";

/** One kind of `wharf import`: its word, a one-line summary for the usage, and its command. */
export interface ImportKind {
  kind: string;
  summary: string;
  /** Its usage lines, when not the local importers' `FILE… [--strict] [options]` form. */
  usage?: string;
  /** It talks to a server over the network: the local importers' options do not apply. */
  network?: true;
  /**
   * Declares its operands and options on its command (the local importers': `declareLocalImport`).
   * A kind without it takes its words as they come and parses `argv` itself.
   */
  declare?(command: Command): void;
  /**
   * Runs `wharf import <kind> <argv…>` (`parsed`: what `declare` declared, read by the `wharf`
   * parser); resolves to the exit code (0, 1 failed, 2 usage).
   */
  run(argv: string[], io: ImportIo, parsed: ParsedImport): Promise<number>;
}

/** The local importers' operands and options: `FILE…`, `--strict`, `--data-dir`, `--database-url`. */
export function declareLocalImport(command: Command): void {
  command
    .usage("FILE… [--strict] [options]")
    .argument("[files...]", "the files to import")
    .option("--strict", "the first rejected record is fatal: its file rolls back, exit 1");
  addConfigOptions(command, STORE_FIELDS);
}

/** The advisory importers': the local ones plus the YAML namespace and the events' author. */
function declareAdvisoryImport(command: Command): void {
  declareLocalImport(command);
  command
    .option("--namespace <ns>", "package namespace of *.advisories.yaml files (default wolfi)")
    .option("--author <name>", "author of the imported events (default wharf-import)");
}

/** The importers, in the order the usage lists them. */
export const IMPORT_KINDS: readonly ImportKind[] = [
  {
    kind: "libraries",
    summary:
      "library versions from JSON lines {ecosystem, name, version, description, publishTime, sizeBytes, remediated}; artifacts are aggregated from them",
    declare: declareLocalImport,
    run: async (_argv, io, parsed) => (await import("./import-libraries.js")).runLibrariesImport(parsed, io),
  },
  {
    kind: "advisories",
    summary:
      "advisories from OSV JSON (files, arrays, directories, all.json indexes, zip archives) and " +
      "Chainguard/Wolfi *.advisories.yaml (--namespace NS, default wolfi); CVE/GHSA records also " +
      "feed the vulnerability metadata",
    declare: declareAdvisoryImport,
    run: async (_argv, io, parsed) =>
      (await import("./import-advisories.js")).runAdvisoryImport("advisories", parsed, io),
  },
  {
    kind: "vulnmeta",
    summary: "upstream vulnerability metadata (summary, details, references, CVSS) from OSV JSON records",
    declare: declareAdvisoryImport,
    run: async (_argv, io, parsed) =>
      (await import("./import-advisories.js")).runAdvisoryImport("vulnmeta", parsed, io),
  },
  {
    kind: "vulnreport",
    summary: "a vulnerability report of an image, uploaded to a running server",
    network: true,
    declare: (command) =>
      command
        .usage("--repo ORG/REPO --digest DIGEST FILE [--api-url URL] [--token TOKEN]")
        .argument("[file]", "a Grype, Trivy or cosign-vuln JSON report")
        .option("--repo <org/repo>", "the image's repository")
        .option("--digest <digest>", "the image's digest"),
    run: async (_argv, io, parsed) =>
      (await import("../client/import-vulnreport.js")).runVulnReportImport(parsed, io),
  },
  {
    kind: "eol",
    summary:
      "end-of-life dates of a product's release cycles (endoflife.date JSON: the legacy array or API v1 " +
      "{result: {releases}}); each --match makes the repo's tags matching TAGGLOB follow the product " +
      "(ListEolTags, v2 deprecated)",
    declare: (command) => {
      declareLocalImport(command);
      command
        .usage("--product NAME --match ORG/REPO:TAGGLOB… FILE.json [--strict] [options]")
        .option("--product <name>", "the endoflife.date product the file describes")
        .option(
          "--match <org/repo:tagglob>",
          "the repo's tags matching TAGGLOB (* and ?) follow the product; repeatable",
          (rule: string, rules: string[]) => [...rules, rule],
          [] as string[],
        );
    },
    run: async (_argv, io, parsed) => (await import("./import-eol.js")).runEolImport(parsed, io),
  },
];

/** What every local importer does with its files (the end of `wharf import <kind> --help`). */
export const LOCAL_IMPORT_NOTES = `
Each FILE is imported in one transaction (all of it or, on a fatal error, nothing); safe while
servers run. Invalid records are reported on stderr (file, location, field) and skipped; the last
line counts the records created, updated, unchanged and rejected.
`;

/**
 * Adds `wharf import` and a subcommand per kind to `program`. A kind's action runs it with `io`
 * and ends the command line with its exit code through `exit` (0 returns). Nothing of the
 * importers loads until one runs.
 */
export function registerImport(
  program: Command,
  io: ImportIo,
  exit: (code: number) => void,
  kinds: readonly ImportKind[] = IMPORT_KINDS,
): void {
  const group = program
    .command("import")
    .description("import data files into the store, or a report to a server")
    .usage("<kind> [options] [files…]")
    .argument("[kind]")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (kind: string | undefined) => {
      // Not one of the kinds below: name those there are.
      if (kind === undefined) group.outputHelp({ error: true });
      else
        io.stderr.write(
          `wharf import: unknown kind "${kind}" (known: ${kinds.map((k) => k.kind).join(", ")})\n`,
        );
      exit(2);
    });
  group.addHelpText("after", () => `\n${commandIndex(group)}`);
  for (const kind of kinds) {
    const command = group.command(kind.kind).description(kind.summary);
    if (kind.declare) {
      kind.declare(command);
    } else {
      // Its own parser reads the words: take them all, in order.
      command.argument("[args...]").allowUnknownOption().allowExcessArguments();
      if (kind.usage) command.addHelpText("after", `\nUsage:\n${kind.usage}`);
    }
    if (!kind.network) command.addHelpText("after", LOCAL_IMPORT_NOTES);
    command.action(async (...args: unknown[]) => {
      const self = args[args.length - 1] as Command;
      const operands = args
        .slice(0, -2)
        .flatMap((a) => (Array.isArray(a) ? a : a === undefined ? [] : [String(a)]));
      exit(await kind.run(self.args, io, { operands, options: self.optsWithGlobals() }));
    });
  }
}
