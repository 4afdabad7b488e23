import { Command, CommanderError, Option } from "commander";
import type { ServiceTable } from "../../sdk/service-clients.js";
import type { CommandContext, GlobalFlags, Io } from "./context.js";
import { EXIT } from "./exit-codes.js";
import { OUTPUT_FORMATS, render, UsageError, type View } from "./output.js";

/**
 * What a command's action gets: its context, positional arguments and its own options. `O` is the
 * type of the options the command declares (commander's camel-cased names: `--default-role` is
 * `defaultRole`; a value option is a string, a repeatable one a string array, a flag a boolean)
 * and `A` that of its operands (`[uid: string]` for `describe <uid>`): the action states them once
 * in its parameters, so it reads them without casts.
 */
export type Action<O extends object = Record<string, unknown>, A extends string[] = string[]> = (
  ctx: CommandContext,
  args: A,
  options: O,
) => Promise<void>;

/** Turns an {@link Action} into a commander action handler with the client context built. */
export type Bind = <O extends object = Record<string, unknown>, A extends string[] = string[]>(
  action: Action<O, A>,
) => (...args: unknown[]) => Promise<void>;

/** The {@link Bind} of a command group whose actions call `services` (a part of WHARF_SERVICES). */
export type BindFor = (services: ServiceTable) => Bind;

/** Writes one resource (`single`) or a list in the context's format. */
export function print<T>(ctx: CommandContext, rows: readonly T[], view: View<T>, single = false): void {
  ctx.stdout.write(render(rows, view, ctx.format, { single, color: ctx.color }));
}

/** Collects a repeatable option's values (`--capability a --capability b`, or `a,b`). */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), ...value.split(",").filter((v) => v !== "")];
}

/** The root command with the global flags, and binders for the subcommands' actions. */
export function rootCommand(io: Io): { program: Command; bindFor: BindFor } {
  const program = new Command("wharf")
    .description("a self-hosted container registry platform")
    .option(
      "--api-url <url>",
      "the platform API (default: WHARF_API_URL, the stored config, http://127.0.0.1:8080)",
    )
    .option("--token <token>", "the API token (default: WHARF_TOKEN, else the stored `wharf auth login`)")
    .option("--timeout <duration>", "time limit of each request, e.g. 30s")
    .option("--no-color", "no colors in tables")
    .option("-v, --verbose", "trace each request (method, URL, status, time; never tokens) on stderr")
    .addOption(
      new Option("-o, --output <format>", "table on a terminal, json when piped").choices([
        ...OUTPUT_FORMATS,
      ]),
    )
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    });
  const bindFor: BindFor =
    (services) =>
    (action) =>
    async (...args: unknown[]) => {
      const command = args[args.length - 1] as Command;
      const positional = args
        .slice(0, -2)
        .flatMap((a) => (Array.isArray(a) ? a : a === undefined ? [] : [String(a)]));
      // Loaded when a client command runs: it brings the SDK and Connect, which help, usage errors
      // and the server-side commands never need.
      const { commandContext } = await import("./context.js");
      const ctx = commandContext(command.optsWithGlobals() as GlobalFlags, io, services);
      // The one place options and operands get their declared types: commander parsed them by
      // the same declarations (required operands and options are there, repeatable ones arrays).
      await action(ctx, positional as never, command.opts() as never);
    };
  return { program, bindFor };
}

/**
 * Runs a client command line (`argv` without `wharf`) on `program`; resolves to the exit code.
 * Help exits 0; a usage error prints commander's line and exits 2; a failure prints the server's
 * message and violations (see describeFailure).
 */
export async function runProgram(program: Command, argv: string[], io: Io): Promise<number> {
  // Subcommands inherit the root's settings (exit override, output) when added; these cover the rest.
  for (const command of allCommands(program)) {
    command.exitOverride();
    command.configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      // `wharf import libraries: unknown option '--bogus'`: the command it is about, like every failure line.
      outputError: (s, write) => write(`${commandPath(command)}: ${s.replace(/^error: /, "")}`),
    });
  }
  try {
    await program.parseAsync(argv, { from: "user" });
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version") return EXIT.ok;
      // commander.help: a group run with no subcommand printed its help on stderr.
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    const { describeFailure } = await import("./failure.js");
    const failure = describeFailure(err);
    const [first, ...more] = failure.lines;
    if (first === undefined) return failure.code;
    io.stderr.write(`wharf: ${first}\n${more.map((line) => `${line}\n`).join("")}`);
    if (io.env.WHARF_DEBUG && !(err instanceof UsageError)) io.stderr.write(`${(err as Error)?.stack}\n`);
    return failure.code;
  }
}

/**
 * The subcommand `name` of `parent`, created with `description` when it is not there yet: groups
 * that server-side and client verbs share (`wharf auth`, `wharf auth pull-token`) are one command.
 */
export function subcommand(parent: Command, name: string, description: string): Command {
  return (
    (parent.commands.find((c) => c.name() === name) as Command | undefined) ??
    parent.command(name).description(description)
  );
}

/** `wharf iam roles list`: the words naming `command`. */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

/** `command` and every command below it. */
export function allCommands(command: Command): Command[] {
  return [command, ...command.commands.flatMap((c) => allCommands(c as Command))];
}
