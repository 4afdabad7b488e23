import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { Command } from "commander";
import { CommandExit } from "../../../../src/cli/client/exit-codes.js";
import { runProgram } from "../../../../src/cli/client/program.js";
import {
  declareLocalImport,
  type ImportKind,
  type ParsedImport,
  registerImport,
} from "../../../../src/cli/server/import.js";
import { type FileImporter, runLocalImport } from "../../../../src/cli/server/import-store.js";
import { openStore } from "../../../../src/storage/sql/open-store.js";

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

/** `argv` read by the `wharf` parser with the local importers' declarations. */
function parsed(argv: string[]): ParsedImport {
  const command = new Command("t").exitOverride();
  declareLocalImport(command);
  command.parse(argv, { from: "user" });
  return { operands: command.args, options: command.opts() };
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
    const code = await runLocalImport(
      "test import",
      parsed([a, b, "--data-dir", dataDir]),
      out,
      settingsImporter,
    );
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
      parsed(["--strict", a, b, c, "--data-dir", dataDir]),
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
    assert.equal(await runLocalImport("t", parsed([file, "--data-dir", dataDir]), out, failing), 1);
    assert.match(out.stderr.text(), new RegExp(`t: ${file}: disk on fire; nothing of it was imported\\n$`));
    assert.deepEqual(await settingsOf(dataDir, ["f.one"]), { "f.one": undefined });
  });

  it("a missing file fails naming it", async () => {
    const out = io();
    const missing = join(dir, "nope.txt");
    assert.equal(
      await runLocalImport("t", parsed([missing, "--data-dir", join(dir, "m")]), out, settingsImporter),
      1,
    );
    assert.match(out.stderr.text(), new RegExp(`t: ${missing}: ENOENT`));
  });

  it("usage errors exit 2 without opening a store", async () => {
    for (const argv of [[], ["a.txt", "--database-url", "mysql://x"]]) {
      const out = io();
      assert.equal(await runLocalImport("t", parsed(argv), out, settingsImporter), 2, argv.join(" "));
      assert.match(out.stderr.text(), /^t: /);
    }
    assert.throws(() => parsed(["--bogus", "a.txt"]), /unknown option '--bogus'/);
  });
});

describe("wharf import on the wharf parser", () => {
  const ran: { argv: string[]; parsed: ParsedImport }[] = [];
  const kinds: ImportKind[] = [
    {
      kind: "things",
      summary: "import things from JSON lines",
      declare: declareLocalImport,
      run: async (argv, _io, parsed) => {
        ran.push({ argv, parsed });
        return parsed.operands.includes("fail") ? 1 : 0;
      },
    },
    {
      // A kind that parses its own words (no `declare`): it gets them all, in order.
      kind: "raw",
      summary: "a kind with its own parser",
      usage: "  wharf import raw --product NAME FILE\n",
      run: async (argv, _io, parsed) => {
        ran.push({ argv, parsed });
        return 0;
      },
    },
  ];
  const run = (argv: string[]) => {
    const out = io();
    const program = new Command("wharf");
    registerImport(
      program,
      out,
      (code) => {
        throw new CommandExit(code);
      },
      kinds,
    );
    return runProgram(program, argv, { ...out, env: {} }).then((code) => ({ code, out }));
  };

  it("runs the named kind with its files and options read; its exit code is the command's", async () => {
    const { code } = await run(["import", "things", "a.jsonl", "--strict", "--data-dir", "/d"]);
    assert.equal(code, 0);
    assert.deepEqual(ran.at(-1)?.parsed.operands, ["a.jsonl"]);
    assert.equal(ran.at(-1)?.parsed.options.strict, true);
    assert.equal(ran.at(-1)?.parsed.options.dataDir, "/d");
    assert.equal((await run(["import", "things", "fail"])).code, 1);
  });

  it("a kind without declarations gets its words as they came", async () => {
    const { code } = await run(["import", "raw", "--product", "x", "f.json", "--match", "a/b:*"]);
    assert.equal(code, 0);
    assert.deepEqual(ran.at(-1)?.argv, ["--product", "x", "f.json", "--match", "a/b:*"]);
    const help = await run(["import", "raw", "--help"]);
    assert.equal(help.code, 0);
    assert.match(help.out.stdout.text(), /wharf import raw --product NAME FILE/);
  });

  it("help lists the kinds; <kind> --help shows that kind's usage and options, without running it", async () => {
    const all = await run(["import", "--help"]);
    assert.equal(all.code, 0);
    assert.match(all.out.stdout.text(), /things \[options\] \[files\.\.\.\] +import things from JSON lines/);
    const count = ran.length;
    const kind = await run(["import", "things", "x", "-h"]);
    assert.equal(kind.code, 0);
    assert.match(kind.out.stdout.text(), /Usage: wharf import things FILE… \[--strict\] \[options\]/);
    assert.match(kind.out.stdout.text(), /--strict/);
    assert.match(kind.out.stdout.text(), /--database-url <url>/);
    assert.doesNotMatch(kind.out.stdout.text(), /--api-addr/, "the server's options are not the importer's");
    assert.equal(ran.length, count, "help ran nothing");
  });

  it("an unknown kind or option is a usage error (2) naming the command", async () => {
    const unknown = await run(["import", "widgets"]);
    assert.equal((await run(["import"])).code, 2, "no kind: the help on stderr, exit 2");
    assert.equal(unknown.code, 2);
    assert.match(unknown.out.stderr.text(), /^wharf import: unknown kind "widgets" \(known: /);
    const flag = await run(["import", "things", "--bogus", "a"]);
    assert.equal(flag.code, 2);
    assert.match(flag.out.stderr.text(), /^wharf import things: unknown option '--bogus'/);
  });
});
