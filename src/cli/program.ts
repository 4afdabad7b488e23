// The one `wharf` command tree (commander): the server-side commands (serve, gc, admin, import,
// auth login|logout, auth pull-token create|revoke) and the client groups on the SDK, so that
// help, usage errors (exit 2), completions and docs/cli.md cover every command the same way.
import type { Command } from "commander";
import { bashCompletion, completionTable, zshCompletion } from "./client/completion.js";
import type { Io } from "./client/context.js";
import { CommandExit } from "./client/exit-codes.js";
import { registerClientGroups } from "./client/index.js";
import { UsageError } from "./client/output.js";
import { rootCommand } from "./client/program.js";
import type { ClientGroup } from "./client/routing.js";
import { commandIndex } from "./command-index.js";
import { registerImport } from "./server/import.js";
import { registerLoginCommands, registerServerCommands } from "./server/server-commands.js";

/** The version `wharf version` and `wharf --version` print. */
export const WHARF_VERSION = "wharf 0.1.0";

/** Ends the command line with `code` (the command printed why): see CommandExit. */
const exit = (code: number): never => {
  throw new CommandExit(code);
};

/**
 * The whole `wharf` tree writing to `io`. Every group is listed; the client subcommands of `load`
 * ("all" for completions and docs, or the group a command line runs) are declared, the others'
 * modules are not loaded. Actions load their modules when they run.
 */
export async function wharfProgram(io: Io, load: "all" | ClientGroup | undefined): Promise<Command> {
  const { program, bindFor } = rootCommand(io);
  program.version(WHARF_VERSION, "--version", "print the version");
  const serverIo = { stdout: io.stdout, stderr: io.stderr, env: io.env, exit };
  registerServerCommands(program, serverIo);
  registerImport(program, io, exit);
  registerLoginCommands(program, serverIo);
  await registerClientGroups(program, bindFor, load);
  program
    .command("completion <shell>")
    .description("print a completion script: bash or zsh (e.g. source <(wharf completion bash))")
    .action(async (shell: string) => {
      if (shell !== "bash" && shell !== "zsh") {
        throw new UsageError(`completion: the shell must be bash or zsh (got "${shell}")`);
      }
      const table = completionTable(load === "all" ? program : await wharfProgram(io, "all"));
      io.stdout.write(shell === "bash" ? bashCompletion(table) : zshCompletion(table));
    });
  program.addHelpText("after", () => `\n${commandIndex(program)}`);
  program
    .command("version")
    .description("print the version")
    .action(() => {
      io.stdout.write(`${WHARF_VERSION}\n`);
    });
  return program;
}
