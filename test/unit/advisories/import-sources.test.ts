import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { fromPath, indexIds } from "../../../src/advisories/import-sources.js";
import { zipOf } from "../../support/zip-writer.js";

const OSV = fileURLToPath(new URL("../../fixtures/advisories/osv/", import.meta.url));
const YAML = fileURLToPath(new URL("../../fixtures/advisories/yaml/", import.meta.url));

async function names(path: string): Promise<string[]> {
  const out: string[] = [];
  for await (const f of fromPath(path)) out.push(f.name);
  return out;
}

describe("fromPath", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "wharf-sources-"));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it("an all.json index stands for the records it lists, in its order", async () => {
    const listed = await names(OSV);
    const index = JSON.parse(await readFile(join(OSV, "all.json"), "utf8")) as { id: string }[];
    assert.deepEqual(
      listed,
      index.map((e) => join(OSV, `${e.id}.json`)),
    );
    assert.deepEqual(await names(join(OSV, "all.json")), listed, "the index given as a file");
  });

  it("walks directories recursively and reads zip archives, with an index inside a zip folder", async () => {
    const files: Record<string, string> = {};
    for (const name of await readdir(OSV)) files[`osv/${name}`] = await readFile(join(OSV, name), "utf8");
    files["yaml/sample.advisories.yaml"] = await readFile(join(YAML, "sample.advisories.yaml"), "utf8");
    files["osv/not-listed.json"] = "{}";
    files["README.txt"] = "ignored";
    const zip = join(dir, "feed.zip");
    await writeFile(zip, zipOf(files));
    const listed = await names(zip);
    assert.equal(listed.length, 9, listed.join("\n"));
    assert.ok(listed.every((n) => n.startsWith(`${zip}!`)));
    assert.ok(!listed.some((n) => n.endsWith("not-listed.json")), "the index decides the folder's JSON");
    assert.ok(listed.includes(`${zip}!yaml/sample.advisories.yaml`));
    await writeFile(join(dir, "top.json"), "{}");
    assert.deepEqual(
      await names(dir),
      [...listed, join(dir, "top.json")],
      "a directory: its zip, then its files",
    );
  });

  it("indexIds recognises only [{id, modified}] arrays", () => {
    assert.deepEqual(indexIds([{ id: "A", modified: "x" }, { id: "B" }]), ["A", "B"]);
    assert.equal(
      indexIds([{ id: "A", modified: "x", summary: "s" }]),
      undefined,
      "a record array is no index",
    );
    assert.equal(indexIds([]), undefined);
    assert.equal(indexIds({ id: "A" }), undefined);
  });
});
