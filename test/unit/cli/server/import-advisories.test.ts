import assert from "node:assert/strict";
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { importAdvisoryPaths } from "../../../../src/cli/server/import-advisories.js";
import { createImportProgress, type RejectedRecord } from "../../../../src/cli/server/import-progress.js";
import type { ListWindow } from "../../../../src/core/list.js";
import { openStore } from "../../../../src/storage/sql/open-store.js";
import type { Store } from "../../../../src/storage/store.js";

const FIXTURES = fileURLToPath(new URL("../../../fixtures/advisories/", import.meta.url));
const ALL: ListWindow = { order: { field: "uid", desc: false }, limit: 200, skip: 0 };

function progress() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { progress: createImportProgress({ stream, label: "test" }), text: () => lines.join("") };
}

describe("importAdvisoryPaths", () => {
  let dir: string;
  let store: Store;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "wharf-import-advisories-"));
    store = await openStore({ sqlitePath: join(dir, "wharf.db") });
  });
  after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("files before a broken one stay imported; the broken one and those after it do not", async () => {
    const feed = join(dir, "feed");
    await mkdir(feed);
    await copyFile(join(FIXTURES, "yaml", "curlish.advisories.yaml"), join(feed, "a.advisories.yaml"));
    await writeFile(join(feed, "b.json"), "{ not json");
    await copyFile(join(FIXTURES, "osv", "PYSEC-2025-11.json"), join(feed, "c.json"));
    const { progress: p } = progress();
    const outcome = await importAdvisoryPaths(store, [feed], { kind: "advisories", strict: false }, p);
    assert.deepEqual(outcome.summary, { created: 3, updated: 0, unchanged: 0, rejected: 0 });
    assert.equal(outcome.failure?.file, join(feed, "b.json"));
    assert.match(String(outcome.failure?.error), /not valid JSON/);
    const names = (await store.advisories.list({}, ALL)).rows.map((r) => r.artifactName);
    assert.deepEqual(names, ["curlish", "curlish", "curlish"]);
  });

  it("a missing path is a failure naming it; --namespace sets the YAML package namespace", async () => {
    const { progress: p } = progress();
    const missing = await importAdvisoryPaths(
      store,
      [join(dir, "nope")],
      { kind: "advisories", strict: false },
      p,
    );
    assert.equal(missing.failure?.file, join(dir, "nope"));
    const { progress: q } = progress();
    const again = await importAdvisoryPaths(
      store,
      [join(FIXTURES, "yaml", "curlish.advisories.yaml")],
      { kind: "advisories", strict: false, namespace: "chainguard", author: "ops@example.com" },
      q,
    );
    assert.deepEqual(again.summary, { created: 0, updated: 3, unchanged: 0, rejected: 0 });
    const rows = (await store.advisories.list({ artifactNames: ["curlish"] }, ALL)).rows;
    assert.deepEqual(new Set(rows.map((r) => r.packageNamespace)), new Set(["chainguard"]));
    assert.deepEqual(
      new Set(rows.flatMap((r) => r.events.map((e) => e.author))),
      new Set(["ops@example.com"]),
    );
  });

  it("vulnmeta reads only metadata, refuses YAML, and --strict stops at the first bad record", async () => {
    const { progress: p, text } = progress();
    const meta = await importAdvisoryPaths(
      store,
      [join(FIXTURES, "osv", "GHSA-4h5j-6m7p-8q9r.json"), join(FIXTURES, "yaml", "sample.advisories.yaml")],
      { kind: "vulnmeta", strict: false },
      p,
    );
    assert.deepEqual(meta.summary, { created: 1, updated: 0, unchanged: 0, rejected: 0 });
    assert.match(String(meta.failure?.error), /OSV JSON, not advisories YAML/);
    assert.equal(
      (await store.advisories.list({ legacyAdvisoryIds: ["GHSA-4h5j-6m7p-8q9r"] }, ALL)).rows.length,
      0,
    );
    assert.equal(
      (await store.advisories.getMetadata("GHSA-4h5j-6m7p-8q9r"))?.summary,
      "Prototype pollution in left-padder",
    );
    assert.equal(text().includes("GHSA-4h5j-6m7p-8q9r.json"), true, "progress names the file");

    const { progress: s } = progress();
    const strict = await importAdvisoryPaths(
      store,
      [join(FIXTURES, "malformed", "bad-events.advisories.yaml")],
      { kind: "advisories", strict: true },
      s,
    );
    const record = (strict.failure?.error as { record?: RejectedRecord } | undefined)?.record;
    assert.equal(record?.location, "advisories[1].events[1].data.fixed-version");
    assert.equal(
      (await store.advisories.list({ artifactNames: ["badpkg"] }, ALL)).rows.length,
      0,
      "rolled back",
    );
  });
});
