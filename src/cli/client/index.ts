import type { Command } from "commander";
import { bashCompletion, completionTable, zshCompletion } from "./completion.js";
import type { Io } from "./context.js";
import { UsageError } from "./output.js";
import { type BindFor, rootCommand, runProgram } from "./program.js";

/**
 * Words of the server-side commands (parsed in src/cli/main.ts, outside this tree), for
 * completions: they are part of the same `wharf`.
 */
const SERVER_SIDE_WORDS: Record<string, string[]> = {
  wharf: ["serve", "gc", "admin", "import", "help", "version"],
  "wharf admin": ["token", "keys", "tokens"],
  "wharf auth": ["login", "logout"],
  "wharf auth pull-token": ["create", "revoke"],
};

type Register = (program: Command, bindFor: BindFor) => void;

/**
 * The command groups, each loaded only when used: a group's module imports its generated
 * services and views, and a cold process pays for every module it loads (bench:cli).
 */
const GROUPS: Record<string, () => Promise<Register>> = {
  iam: async () => (await import("./commands/iam.js")).registerIam,
  images: async () => (await import("./commands/images.js")).registerImages,
  libraries: async () => (await import("./commands/libraries.js")).registerLibraries,
  events: async () => (await import("./commands/events.js")).registerEvents,
  auth: async () => (await import("./commands/auth.js")).registerAuth,
  vulns: async () => (await import("./commands/vulns.js")).registerVulns,
  advisories: async () => (await import("./commands/advisories.js")).registerAdvisories,
};

/**
 * The client command tree: every group, or with `only` just that group (what running one command
 * needs). The whole tree is what help, completions and docs/cli.md are made from.
 */
export async function clientProgram(io: Io, only?: string): Promise<Command> {
  const { program, bindFor } = rootCommand(io);
  const names = only !== undefined && only in GROUPS ? [only] : Object.keys(GROUPS);
  for (const name of names) (await (GROUPS[name] as () => Promise<Register>)())(program, bindFor);
  program
    .command("completion <shell>")
    .description("print a completion script: bash or zsh (e.g. source <(wharf completion bash))")
    .action(async (shell: string) => {
      if (shell !== "bash" && shell !== "zsh") {
        throw new UsageError(`completion: the shell must be bash or zsh (got "${shell}")`);
      }
      const table = completionTable(
        only === undefined ? program : await clientProgram(io),
        SERVER_SIDE_WORDS,
      );
      io.stdout.write(shell === "bash" ? bashCompletion(table) : zshCompletion(table));
    });
  return program;
}

/** The first command word of `argv` (global flags before it skipped). */
function groupOf(argv: readonly string[]): string | undefined {
  return argv.find((a) => !a.startsWith("-"));
}

/** Runs a client command line (see isClientCommand); resolves to the exit code. */
export async function runClient(argv: string[], io: Io): Promise<number> {
  return runProgram(await clientProgram(io, groupOf(argv)), argv, io);
}
