// Unit test files run in a few shared processes instead of one process each: loading TypeScript
// through tsx costs a process about a second, more than most unit files take to run. A batch is a
// generated entry module that imports its files one after another; node:test then runs their tests
// in that process, as it would each file's.
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * @typedef {object} Batch
 * @property {string} entry absolute path of the generated entry module (a `*.test.mjs` in `dir`)
 * @property {string[]} files the repo-relative test files it imports, in order
 * @property {string} label how reports name it, e.g. `test/unit (batch 1 of 3)`
 */

/**
 * Splits `files` (repo-relative, under `root`) into at most `count` batches, dealing them out in
 * turn so each batch gets a share of every folder, and writes each batch's entry module into `dir`.
 * One file, or none, makes no batch: it runs on its own as usual.
 * @returns {Batch[]}
 */
export function unitBatches(files, count, dir, root) {
  if (files.length < 2) return [];
  const groups = Array.from({ length: Math.min(count, files.length) }, () => []);
  for (const [i, file] of files.entries()) groups[i % groups.length].push(file);
  return groups.map((group, i) => {
    const entry = join(dir, `unit-batch-${i + 1}.test.mjs`);
    const imports = group.map(
      (f) => `await import(${JSON.stringify(pathToFileURL(resolve(root, f)).href)});`,
    );
    writeFileSync(entry, `${imports.join("\n")}\n`);
    return {
      entry,
      files: group,
      label: `test/unit (batch ${i + 1} of ${groups.length})`,
    };
  });
}
