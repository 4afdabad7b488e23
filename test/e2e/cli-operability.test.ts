import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { runCliInProcess } from "../support/cli-in-process.js";
import { engineSkipReason } from "../support/databases.js";
import {
  existingPostgres,
  findPostgresBin,
  type PostgresServer,
  throwawayPostgres,
} from "../support/postgres-cluster.js";
import { type CliRun, runWharf } from "../support/wharf-process.js";

// The command line as an operator meets it: every command answers -h/--help, and a command that
// cannot start says why in one line on stderr and exits 1, never with a stack trace.
// Help, usage errors and completions run in this process through runCli (the parser bin/wharf.js
// runs; a spawned CLI costs a Node start-up each, 46 of them for the help alone). The shipped
// bin/wharf.js (built dist/) still runs for the top-level help, one -h, `wharf` alone (exit 2) and
// every start-up failure (exit 1, one line, the process's own stderr).

/** The shipped bin/wharf.js, a child process. */
function spawned(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runWharf(args, { ...process.env, WHARF_DEBUG: "", ...env });
}

/** The same command line through runCli in this process. */
function wharf(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runCliInProcess(args, { ...process.env, WHARF_DEBUG: "", ...env });
}

/** Asserts exit 1 and exactly one stderr line matching `pattern`, with no stack frame. */
function assertOneLineFailure(run: CliRun, pattern: RegExp): void {
  assert.equal(run.code, 1, `exit code; stderr: ${run.stderr}`);
  const lines = run.stderr.split("\n").filter((l) => l !== "");
  assert.equal(lines.length, 1, `one line on stderr, got:\n${run.stderr}`);
  assert.match(lines[0] ?? "", /^wharf: /);
  assert.match(lines[0] ?? "", pattern);
  assert.doesNotMatch(run.stderr, /\n\s+at /, "no stack frames");
}

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

const LOCAL = ["--api-addr", "127.0.0.1:0", "--registry-addr", "127.0.0.1:0"];

describe("wharf -h / --help", () => {
  it("every command of the top-level help prints its own help with -h and --help and exits 0", async () => {
    const top = await spawned(["help"]);
    assert.equal(top.code, 0);
    // The index at the end of `wharf --help`: `  wharf <words> <usage>`, then its description.
    const lines = top.stdout.split("\n");
    const commands = lines.flatMap((line, i) => {
      if (!line.startsWith("  wharf ")) return [];
      const words: string[] = [];
      for (const token of line.trim().split(/\s+/).slice(1)) {
        if (!/^[a-z][a-z-]*$/.test(token)) break;
        words.push(token);
      }
      return [{ words, description: (lines[i + 1] ?? "").trim() }];
    });
    for (const required of [
      "serve",
      "gc",
      "admin token",
      "admin keys rotate",
      "import libraries",
      "import vulnreport",
      "auth login",
      "auth pull-token create",
      "iam",
      "images",
      "completion",
    ]) {
      assert.ok(
        commands.some((c) => c.words.join(" ") === required),
        `${required} is listed: ${commands.map((c) => c.words.join(" "))}`,
      );
    }
    const cases = commands.flatMap((command) => ["-h", "--help"].map((flag) => ({ ...command, flag })));
    // One after the other: in-process runs borrow process.env.
    const results: ((typeof cases)[number] & { run: CliRun })[] = [];
    for (const c of cases) results.push({ ...c, run: await wharf([...c.words, c.flag]) });
    for (const { words, description, flag, run } of results) {
      const what = `wharf ${words.join(" ")} ${flag}`;
      assert.equal(run.code, 0, `${what} exits 0 (stderr: ${run.stderr})`);
      assert.ok(
        run.stdout.startsWith(`Usage: wharf ${words.join(" ")} `),
        `${what} prints its usage:\n${run.stdout}`,
      );
      const flat = run.stdout.replace(/\s+/g, " ");
      assert.ok(flat.includes(description.split(" ").slice(0, 4).join(" ")), `${what} describes it`);
      assert.equal(run.stderr, "", `${what} writes nothing else`);
    }
  });

  it("help for a group, through `wharf help`, and after other flags; serve -h starts nothing", async () => {
    const group = await wharf(["auth", "--help"]);
    assert.equal(group.code, 0);
    for (const sub of ["login", "token", "logout", "pull-token", "status", "configure-docker"]) {
      assert.match(group.stdout, new RegExp(`\\n  ${sub}\\b`), `auth --help lists ${sub}`);
    }
    const viaHelp = await wharf(["help", "gc"]);
    assert.equal(viaHelp.code, 0);
    assert.match(viaHelp.stdout, /^Usage: wharf gc \[options\]/);
    assert.match(viaHelp.stdout, /--window <duration>/);
    assert.match(
      viaHelp.stdout,
      /--data-dir <dir> .*\[WHARF_DATA_DIR\]/s,
      "configuration flags name their variable",
    );
    const nested = await wharf(["help", "admin", "keys", "rotate"]);
    assert.match(nested.stdout, /^Usage: wharf admin keys rotate \[options\]/);
    // The shipped bin: -h after other flags prints the help and exits, starting no server.
    const late = await spawned(["serve", "--api-addr", "127.0.0.1:1", "-h"]);
    assert.equal(late.code, 0, "help wins over the other flags: nothing is started");
    assert.match(late.stdout, /^Usage: wharf serve/);
    const unknown = await wharf(["frobnicate", "-h"]);
    assert.equal(unknown.code, 2, "an unknown command is still an error");
  });

  it("usage errors of the server-side commands exit 2 with one line naming the command", async () => {
    for (const [args, pattern] of [
      [["serve", "--bogus"], /^wharf serve: unknown option '--bogus'/],
      [["gc", "--window"], /^wharf gc: option '--window <duration>' argument missing/],
      [["admin", "token", "extra"], /^wharf admin token: too many arguments/],
      [["admin", "keys", "spin"], /^wharf admin keys: unknown command 'spin'/],
      [["import", "widgets", "a.jsonl"], /^wharf import: unknown kind "widgets" \(known: /],
      [["auth", "pull-token", "create", "--nope"], /^wharf auth pull-token create: unknown option '--nope'/],
      [["frobnicate"], /^wharf: unknown command 'frobnicate'/],
    ] as const) {
      const run = await wharf([...args]);
      assert.equal(run.code, 2, `${args.join(" ")}: ${run.stderr}`);
      assert.match(run.stderr, pattern);
      assert.equal(run.stdout, "");
      assert.doesNotMatch(run.stderr, /\n\s+at /, "no stack frames");
    }
    const bare = await spawned([]);
    assert.equal(bare.code, 2, "wharf alone prints its help and exits 2");
    assert.match(bare.stderr, /^Usage: wharf /);
  });

  it("completions cover the server-side commands from the same tree", async () => {
    const bash = await wharf(["completion", "bash"]);
    assert.equal(bash.code, 0, bash.stderr);
    assert.match(bash.stdout, /\['wharf'\]='[^']*\bserve\b[^']*\bgc\b/);
    assert.match(bash.stdout, /\['wharf gc'\]='[^']*--window/);
    assert.match(bash.stdout, /\['wharf admin keys'\]='rotate list/);
    assert.match(bash.stdout, /\['wharf import libraries'\]='[^']*--strict/);
    const zsh = await wharf(["completion", "zsh"]);
    assert.match(zsh.stdout, /'wharf admin tokens' 'revoke'/);
    assert.match(zsh.stdout, /'wharf events deliveries' '[^']*\bwait\b/);
  });
});

describe("start-up failures: one line, exit 1", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "wharf-startup-"));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  for (const which of ["registry", "api"] as const) {
    it(`a busy ${which} port`, async () => {
      const busy: Server = createServer();
      await new Promise<void>((r) => busy.listen(0, "127.0.0.1", r));
      const { port } = busy.address() as { port: number };
      try {
        const addr = `127.0.0.1:${port}`;
        const args =
          which === "api"
            ? ["--api-addr", addr, "--registry-addr", "127.0.0.1:0"]
            : ["--api-addr", "127.0.0.1:0", "--registry-addr", addr];
        const run = await spawned(["serve", "--data-dir", join(dir, `busy-${which}`), ...args]);
        assertOneLineFailure(run, new RegExp(`cannot listen on ${addr}: the address is already in use`));
      } finally {
        await new Promise((r) => busy.close(r));
      }
    });
  }

  it("an unwritable data folder (a path through a regular file)", async () => {
    const file = join(dir, "file");
    await writeFile(file, "not a folder");
    for (const command of [["serve", ...LOCAL], ["gc"], ["admin", "token"]]) {
      const run = await spawned([...command, "--data-dir", join(file, "sub")]);
      assertOneLineFailure(run, new RegExp(`cannot write ${file}.*not a folder`));
    }
  });

  it("an unreachable PostgreSQL (a closed port), never printing the password", async () => {
    const url = `postgres://wharf:s3cret-pw@127.0.0.1:${await closedPort()}/wharf`;
    const run = await spawned([
      "serve",
      "--data-dir",
      join(dir, "pg-closed"),
      "--database-url",
      url,
      ...LOCAL,
    ]);
    assertOneLineFailure(run, /cannot reach the database at 127\.0\.0\.1:\d+: connection refused/);
    assert.ok(!run.stderr.includes("s3cret-pw"), "no password on stderr");
  });
});

describe("start-up with a missing PostgreSQL database", { skip: engineSkipReason("postgres") }, () => {
  let server: PostgresServer;
  const cleanup: string[] = [];
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: server.adminUrl });
    await client.connect();
    try {
      return await client.query(statement);
    } finally {
      await client.end();
    }
  };
  before(async () => {
    const url = process.env.WHARF_TEST_DATABASE_URL;
    server = url ? existingPostgres(url) : await throwawayPostgres(findPostgresBin() as string);
  });
  after(async () => {
    for (const statement of cleanup.reverse()) await admin(statement).catch(() => {});
  });

  it("is created when the role may create databases, and the command runs", async () => {
    const name = `wharf_created_${randomBytes(4).toString("hex")}`;
    cleanup.push(`drop database if exists ${name} with (force)`);
    const run = await wharf(["admin", "token", "--database-url", server.urlOf(name)]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^[\w-]+\.[\w-]+\.[\w-]+\n$/, "a token was minted from the new database");
    const found = await admin(`select 1 from pg_database where datname = '${name}'`);
    assert.equal(found.rowCount, 1, "the database exists now");
  });

  it("says how to create it when the role may not", async () => {
    const role = `wharf_nocreate_${randomBytes(4).toString("hex")}`;
    const name = `wharf_missing_${randomBytes(4).toString("hex")}`;
    await admin(`create role ${role} login nocreatedb`);
    cleanup.push(`drop role if exists ${role}`);
    const url = new URL(server.urlOf(name));
    url.username = role;
    url.password = "";
    const run = await spawned([
      "serve",
      "--data-dir",
      join(tmpdir(), name),
      "--database-url",
      url.toString(),
      ...LOCAL,
    ]);
    assertOneLineFailure(
      run,
      new RegExp(
        `database "${name}" does not exist and role "${role}" may not create it: run createdb .*${name}`,
      ),
    );
    const found = await admin(`select 1 from pg_database where datname = '${name}'`);
    assert.equal(found.rowCount, 0, "nothing was created");
  });
});
