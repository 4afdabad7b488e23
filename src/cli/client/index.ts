import type { Command } from "commander";
import { registerAuth } from "./commands/auth.js";
import { registerEvents } from "./commands/events.js";
import { registerIam } from "./commands/iam.js";
import { registerImages } from "./commands/images.js";
import { registerLibraries } from "./commands/libraries.js";
import { bashCompletion, completionTable, zshCompletion } from "./completion.js";
import type { Io } from "./context.js";
import { UsageError } from "./output.js";
import { rootCommand, runProgram } from "./program.js";

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

/** The whole client command tree, for running, help, completions and docs/cli.md. */
export function clientProgram(io: Io): Command {
  const { program, bind } = rootCommand(io);
  registerIam(program, bind);
  registerImages(program, bind);
  registerLibraries(program, bind);
  registerEvents(program, bind);
  registerAuth(program, bind);
  program
    .command("completion <shell>")
    .description("print a completion script: bash or zsh (e.g. source <(wharf completion bash))")
    .action(async (shell: string) => {
      const table = completionTable(program, SERVER_SIDE_WORDS);
      if (shell === "bash") io.stdout.write(bashCompletion(table));
      else if (shell === "zsh") io.stdout.write(zshCompletion(table));
      else throw new UsageError(`completion: the shell must be bash or zsh (got "${shell}")`);
    });
  return program;
}

/** Runs a client command line (see {@link isClientCommand}); resolves to the exit code. */
export function runClient(argv: string[], io: Io): Promise<number> {
  return runProgram(clientProgram(io), argv, io);
}
