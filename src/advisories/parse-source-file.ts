import type { AdvisoryRow, VulnMetadataRow } from "../storage/advisory-store.js";
import { parseAdvisoriesYaml } from "./formats/advisories-yaml.js";
import type { ImportIssue, Parsed } from "./formats/import-issue.js";
import { rejected } from "./formats/import-issue.js";
import { mapOsvRecord } from "./formats/osv-record.js";
import type { SourceFile } from "./import-sources.js";

/** What to read from a file: advisories (and upstream metadata), or metadata only. */
export type ImportKind = "advisories" | "vulnmeta";

/** Options of parsing one file. */
export interface ParseOptions {
  kind: ImportKind;
  /** Author of imported events. */
  author: string;
  /** Package namespace of YAML files (default `wolfi`). */
  namespace?: string;
}

/** Everything one file holds: rows to write, and the records rejected (with where and why). */
export interface ParsedFile {
  advisories: AdvisoryRow[];
  metadata: VulnMetadataRow[];
  rejected: ImportIssue[];
  /** Records seen (taken + rejected), for progress. */
  records: number;
}

function parseOsvText(text: string, options: ParseOptions): Parsed<ParsedFile> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return rejected("$", "", `not valid JSON: ${(err as Error).message}`);
  }
  const records = Array.isArray(value)
    ? value.map((r, i) => ({ r, at: `$[${i}]` }))
    : [{ r: value, at: "$" }];
  const out: ParsedFile = { advisories: [], metadata: [], rejected: [], records: records.length };
  for (const { r, at } of records) {
    const mapped = mapOsvRecord(r, at, { author: options.author, metadataOnly: options.kind === "vulnmeta" });
    if (!mapped.ok) {
      out.rejected.push(mapped.issue);
      continue;
    }
    out.advisories.push(...mapped.value.advisories);
    if (mapped.value.metadata) out.metadata.push(mapped.value.metadata);
  }
  return { ok: true, value: out };
}

/**
 * Parses one source file: `*.yaml`/`*.yml` as Chainguard advisories YAML, anything else as OSV JSON
 * (one record or an array of records). A file-level problem (not JSON, not an advisories document,
 * YAML given to a metadata import) is `{ok: false}`; bad records inside a good file are listed in
 * `rejected`.
 */
export function parseSourceFile(file: SourceFile, options: ParseOptions): Parsed<ParsedFile> {
  if (/\.ya?ml$/i.test(file.name)) {
    if (options.kind === "vulnmeta") {
      return rejected("", "", "vulnerability metadata is read from OSV JSON, not advisories YAML");
    }
    const parsed = parseAdvisoriesYaml(file.text, {
      author: options.author,
      ...(options.namespace ? { namespace: options.namespace } : {}),
    });
    if (!parsed.ok) return parsed;
    const { advisories, rejected: bad } = parsed.value;
    return {
      ok: true,
      value: { advisories, metadata: [], rejected: bad, records: advisories.length + bad.length },
    };
  }
  return parseOsvText(file.text, options);
}
