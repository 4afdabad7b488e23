import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { type ImportKind, runImport } from "../../../src/cli/import.js";
import { type FileImporter, runLocalImport } from "../../../src/cli/import-store.js";
import { openStore } from "../../../src/storage/sql/open-store.js";

function captureStream(): Writable & { text(): string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  }) as Writable & { text(): string };
  stream.text = () => chunks.join("");
  return stream;
}

function io() {
  return { stdout: captureStream(), stderr: captureStream() };
}

/**
 * A small real importer over the settings store: each line `key=value`; a line without `=` is
 * rejected. Writes go through the file's transaction like every importer's.
 */
const settingsImporter: FileImporter<Array<[string, string]>> = {
  async read(file, sink) {
    const lines = (await readFile(file, "utf8")).split("\n").filter((l) => l !== "");
    sink.start(lines.length);
    const pairs: Array<[string, string]> = [];
    lines.forEach((line, i) => {
      const at = line.indexOf("=");
      if (at < 0) {
        sink.reject({ location: `line ${i + 1}`, field: "", message: "expected key=value" });
        sink.advance();
      } else {
        pairs.push([line.slice(0, at), line.slice(at + 1)]);
      }
    });
    return pairs;
  },
  async write(tx, pairs, sink) {
    for (const [key, value] of pairs) {
      const before = await tx.settings.get(key);
      if (before === value) sink.count("unchanged");
      else {
        await tx.settings.put(key, value);
        sink.count(before === undefined ? "created" : "updated");
      }
      sink.advance();
    }
  },
};

describe("runLocalImport on a real SQLite store", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "wharf-import-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const settingsOf = async (dataDir: string, keys: string[]) => {
    const store = await openStore({ sqlitePath: join(dataDir, "wharf.db") });
    try {
      return Object.fromEntries(await Promise.all(keys.map(async (k) => [k, await store.settings.get(k)])));
    } finally {
      await store.close();
    }
  };

  it("imports every file, skips and reports rejected records, counts created/updated/unchanged", async () => {
    const dataDir = join(dir, "lenient");
    const a = join(dir, "a.txt");
    const b = join(dir, "b.txt");
    await writeFile(a, "imp.one=1\nimp.two=2\n");
    await writeFile(b, "imp.one=1\nbroken\nimp.two=22\nimp.three=3\n");
    const out = io();
    const code = await runLocalImport("test import", [a, b, "--data-dir", dataDir], out, settingsImporter);
    assert.equal(code, 0, out.stderr.text());
    const lines = out.stderr.text().trim().split("\n");
    assert.ok(lines.includes(`test import: ${b} line 2: expected key=value`), out.stderr.text());
    assert.equal(lines.at(-1), "test import: created 3, updated 1, unchanged 1, rejected 1");
    assert.deepEqual(await settingsOf(dataDir, ["imp.one", "imp.two", "imp.three"]), {
      "imp.one": "1",
      "imp.two": "22",
      "imp.three": "3",
    });
  });

  it("--strict: the first rejection rolls its file back and exits 1 naming it; earlier files stay", async () => {
    const dataDir = join(dir, "strict");
    const a = join(dir, "sa.txt");
    const b = join(dir, "sb.txt");
    const c = join(dir, "sc.txt");
    await writeFile(a, "s.a=1\n");
    await writeFile(b, "s.b=1\ns.b2=2\nbroken\n");
    await writeFile(c, "s.c=1\n");
    const out = io();
    const code = await runLocalImport(
      "test import",
      ["--strict", a, b, c, "--data-dir", dataDir],
      out,
      settingsImporter,
    );
    assert.equal(code, 1);
    const lines = out.stderr.text().trim().split("\n");
    assert.equal(lines.at(-2), "test import: created 1, updated 0, unchanged 0, rejected 0");
    assert.equal(lines.at(-1), `test import: ${b} line 3: expected key=value; --strict: ${b} rolled back`);
    assert.deepEqual(await settingsOf(dataDir, ["s.a", "s.b", "s.b2", "s.c"]), {
      "s.a": "1",
      "s.b": undefined,
      "s.b2": undefined,
      "s.c": undefined,
    });
  });

  it("a failure while writing rolls the whole file back", async () => {
    const dataDir = join(dir, "fatal");
    const file = join(dir, "f.txt");
    await writeFile(file, "f.one=1\nf.two=2\n");
    const failing: FileImporter<Array<[string, string]>> = {
      read: settingsImporter.read,
      async write(tx, pairs, sink) {
        await settingsImporter.write(tx, pairs.slice(0, 1), sink);
        throw new Error("disk on fire");
      },
    };
    const out = io();
    assert.equal(await runLocalImport("t", [file, "--data-dir", dataDir], out, failing), 1);
    assert.match(out.stderr.text(), new RegExp(`t: ${file}: disk on fire; nothing of it was imported\\n$`));
    assert.deepEqual(await settingsOf(dataDir, ["f.one"]), { "f.one": undefined });
  });

  it("a missing file fails naming it", async () => {
    const out = io();
    const missing = join(dir, "nope.txt");
    assert.equal(
      await runLocalImport("t", [missing, "--data-dir", join(dir, "m")], out, settingsImporter),
      1,
    );
    assert.match(out.stderr.text(), new RegExp(`t: ${missing}: ENOENT`));
  });

  it("usage errors exit 2 without opening a store", async () => {
    for (const argv of [[], ["--bogus", "a.txt"], ["a.txt", "--database-url", "mysql://x"]]) {
      const out = io();
      assert.equal(await runLocalImport("t", argv, out, settingsImporter), 2, argv.join(" "));
      assert.match(out.stderr.text(), /^t: /);
    }
  });
});

describe("wharf import dispatcher", () => {
  const ran: string[][] = [];
  const kinds: ImportKind[] = [
    {
      kind: "things",
      summary: "import things from JSON lines",
      run: async (argv) => {
        ran.push(argv);
        return 0;
      },
    },
  ];

  it("runs the named kind with the rest of the arguments", async () => {
    assert.equal(await runImport(["things", "a.jsonl", "--strict"], io(), kinds), 0);
    assert.deepEqual(ran.at(-1), ["a.jsonl", "--strict"]);
  });

  it("--help lists the kinds and the shared options; <kind> --help that kind alone, without running it", async () => {
    const out = io();
    assert.equal(await runImport(["--help"], out, kinds), 0);
    assert.match(
      out.stdout.text(),
      /wharf import things FILE… \[--strict\] \[options\]\n\s+import things from JSON lines/,
    );
    assert.match(out.stdout.text(), /--strict/);
    assert.match(out.stdout.text(), /--database-url/);
    const count = ran.length;
    const kindOut = io();
    assert.equal(await runImport(["things", "x", "-h"], kindOut, kinds), 0);
    assert.match(kindOut.stdout.text(), /wharf import things FILE…/);
    assert.equal(ran.length, count);
  });

  it("an unknown or missing kind is a usage error", async () => {
    const out = io();
    assert.equal(await runImport(["widgets"], out, kinds), 2);
    assert.equal(out.stderr.text(), 'wharf import: unknown kind "widgets" (known: things)\n');
    assert.equal(await runImport([], io(), kinds), 2);
  });
});
