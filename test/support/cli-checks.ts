import assert from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CliRun } from "./wharf-process.js";

/** How a suite runs a command line: in this process (runCliInProcess) or the shipped bin (runWharf). */
export type CliRunner = (args: string[], env: NodeJS.ProcessEnv) => Promise<CliRun>;

/** The checks a CLI suite makes of the command lines it runs. */
export interface CliChecks {
  /** Runs `wharf args…` with the suite's environment plus `extraEnv`. */
  wharfCli(args: string[], extraEnv?: NodeJS.ProcessEnv): Promise<CliRun>;
  /** Runs it, asserts exit 0 and answers its stdout. */
  ok(args: string[], extraEnv?: NodeJS.ProcessEnv): Promise<string>;
  /** Runs it with `-o json` (exit 0) and answers the parsed stdout. */
  json<T>(args: string[]): Promise<T>;
  /** Runs it and asserts exit `code`, `message` on stderr, and no stack trace. */
  fails(args: string[], code: number, message: RegExp, extraEnv?: NodeJS.ProcessEnv): Promise<CliRun>;
}

/**
 * The checks of command lines run by `run` with the environment `env()` answers when each runs (a
 * suite sets it up in `before`). With `failurePrintsNothing`, `fails` also asserts stdout is empty.
 */
export function cliChecks(
  run: CliRunner,
  env: () => NodeJS.ProcessEnv,
  options: { failurePrintsNothing?: boolean } = {},
): CliChecks {
  const wharfCli = (args: string[], extraEnv: NodeJS.ProcessEnv = {}) => run(args, { ...env(), ...extraEnv });
  const ok = async (args: string[], extraEnv?: NodeJS.ProcessEnv) => {
    const r = await wharfCli(args, extraEnv);
    assert.equal(r.code, 0, `wharf ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  return {
    wharfCli,
    ok,
    json: async <T>(args: string[]) => JSON.parse(await ok([...args, "-o", "json"])) as T,
    async fails(args, code, message, extraEnv) {
      const r = await wharfCli(args, extraEnv);
      assert.equal(r.code, code, `wharf ${args.join(" ")} exits ${code}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
      if (options.failurePrintsNothing) assert.equal(r.stdout, "", "nothing on stdout");
      return r;
    },
  };
}

/**
 * A fresh home folder for a CLI suite, and the environment its command lines run with: that home,
 * `wharf`'s config folder inside it, the server's API URL and a token (`WHARF_TOKEN`).
 * The suite removes `home` when it ends.
 */
export async function cliHome(
  prefix: string,
  server: { apiUrl: string },
  token: string,
): Promise<{ home: string; env: NodeJS.ProcessEnv }> {
  const home = await mkdtemp(join(tmpdir(), prefix));
  return {
    home,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      WHARF_CONFIG_DIR: join(home, "wharf"),
      WHARF_API_URL: server.apiUrl,
      WHARF_TOKEN: token,
    },
  };
}
