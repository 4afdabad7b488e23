import { readdir, readFile, stat } from "node:fs/promises";
import { basename, dirname, join, posix } from "node:path";
import yauzl from "yauzl";

/** One file to import: a display name (path, or `archive.zip!entry`) and its text. */
export interface SourceFile {
  name: string;
  text: string;
}

/** Largest zip entry read (uncompressed); a bigger one is reported as a failed file. */
const MAX_ENTRY_BYTES = 256 * 1024 * 1024;

/** True for the file names an advisories import reads. */
export function isImportable(name: string): boolean {
  return /\.(json|ya?ml|zip)$/i.test(name);
}

/** The ids an OSV `all.json` index lists (`[{id, modified}]`), or undefined when `value` is no index. */
export function indexIds(value: unknown): string[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const ids: string[] = [];
  for (const entry of value) {
    if (typeof entry !== "object" || entry === null) return undefined;
    const keys = Object.keys(entry);
    if (
      !keys.every((k) => k === "id" || k === "modified") ||
      typeof (entry as { id?: unknown }).id !== "string"
    ) {
      return undefined;
    }
    ids.push((entry as { id: string }).id);
  }
  return ids;
}

function readIndex(text: string): string[] | undefined {
  try {
    return indexIds(JSON.parse(text));
  } catch {
    return undefined;
  }
}

async function* fromDirectory(dir: string): AsyncGenerator<SourceFile> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  const hasIndex = entries.some((e) => e.isFile() && e.name === "all.json");
  if (hasIndex) yield* fromPath(join(dir, "all.json"));
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* fromDirectory(path);
    // With an index, the directory's JSON records are the ones it lists.
    else if (entry.isFile() && isImportable(entry.name) && !(hasIndex && entry.name.endsWith(".json"))) {
      yield* fromPath(path);
    }
  }
}

function openZip(path: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.open(path, { lazyEntries: true, autoClose: true }, (err, zip) =>
      err ? reject(err) : resolve(zip),
    ),
  );
}

function readEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<string> {
  return new Promise((resolve, reject) => {
    if (entry.uncompressedSize > MAX_ENTRY_BYTES) {
      reject(new Error(`${entry.fileName} is larger than ${MAX_ENTRY_BYTES} bytes`));
      return;
    }
    zip.openReadStream(entry, (err, stream) => {
      if (err) return reject(err);
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("error", reject);
      stream.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    });
  });
}

/** Every importable entry of a zip, with an `all.json` in a folder narrowing that folder's JSON. */
async function* fromZip(path: string): AsyncGenerator<SourceFile> {
  const zip = await openZip(path);
  const files = new Map<string, string>();
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on("error", reject);
      zip.on("end", resolve);
      zip.on("entry", (entry: yauzl.Entry) => {
        if (
          entry.fileName.endsWith("/") ||
          !isImportable(entry.fileName) ||
          entry.fileName.endsWith(".zip")
        ) {
          zip.readEntry();
          return;
        }
        readEntry(zip, entry).then((text) => {
          files.set(entry.fileName, text);
          zip.readEntry();
        }, reject);
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
  const indexed = new Set<string>();
  for (const [name, text] of files) {
    if (posix.basename(name) !== "all.json") continue;
    const dir = posix.dirname(name);
    indexed.add(dir);
    for (const id of readIndex(text) ?? []) {
      const member = dir === "." ? `${id}.json` : `${dir}/${id}.json`;
      const memberText = files.get(member);
      yield { name: `${path}!${member}`, text: memberText ?? "" };
    }
  }
  for (const [name, text] of [...files].sort(([a], [b]) => a.localeCompare(b))) {
    if (name.endsWith(".json") && indexed.has(posix.dirname(name))) continue;
    yield { name: `${path}!${name}`, text };
  }
}

/**
 * The files under `path`: a file itself; a zip's importable entries; a directory's importable files,
 * recursively in name order. An OSV `all.json` index (a file, or one in a directory or zip folder)
 * stands for the `<id>.json` records it lists next to it, and then the folder's other JSON files
 * are not read; a listed record that is missing comes back with empty text (a parse failure, named).
 */
export async function* fromPath(path: string): AsyncGenerator<SourceFile> {
  const info = await stat(path);
  if (info.isDirectory()) {
    yield* fromDirectory(path);
    return;
  }
  if (/\.zip$/i.test(path)) {
    yield* fromZip(path);
    return;
  }
  const text = await readFile(path, "utf8");
  const ids = basename(path) === "all.json" ? readIndex(text) : undefined;
  if (ids === undefined) {
    yield { name: path, text };
    return;
  }
  for (const id of ids) {
    const member = join(dirname(path), `${id}.json`);
    yield { name: member, text: await readFile(member, "utf8").catch(() => "") };
  }
}
