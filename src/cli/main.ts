import type { Io } from "./client/context.js";
import { EXIT } from "./client/exit-codes.js";
import { clientGroupOf } from "./client/index.js";
import { runProgram } from "./client/program.js";
import { commandWords } from "./client/routing.js";
import { wharfProgram } from "./program.js";

/**
 * Runs a `wharf` command line (`argv` without `wharf`) writing to `io`; resolves to the exit code:
 * 0 ok, 1 failed, 2 usage (commander's errors, bad flag values, a configuration error), 4 not
 * found, 5 permission denied. `wharf help <words>` is `wharf <words> --help`; `wharf` alone prints
 * the help on stderr and exits 2. Only the modules the command needs load (ADR 0028).
 */
export async function runCli(argv: string[], io: Io): Promise<number> {
  const args = argv[0] === "help" ? [...argv.slice(1), "--help"] : argv;
  const program = await wharfProgram(io, clientGroupOf(args));
  // An unknown command is an error even with -h (commander would print the top-level help).
  const [first] = commandWords(args);
  if (first !== undefined && !program.commands.some((c) => c.name() === first)) {
    io.stderr.write(`wharf: unknown command '${first}' (wharf --help lists them)\n`);
    return EXIT.usage;
  }
  return runProgram(program, args, io);
}

/** `wharf` itself: {@link runCli} on the process's streams and environment. */
export function main(argv: string[]): Promise<number> {
  return runCli(argv, { stdout: process.stdout, stderr: process.stderr, env: process.env });
}
