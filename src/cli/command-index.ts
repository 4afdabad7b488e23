// The index of commands at the end of a group's help: one usage line and description per command.
import type { Command } from "commander";
import { allCommands, commandPath } from "./client/program.js";
import { isClientGroup } from "./client/routing.js";

/** Width of the command index's descriptions (and of docs/cli.md). */
export const HELP_WIDTH = 100;

/**
 * The end of `wharf --help` (and `wharf import --help`): every command below `root` that runs
 * (`wharf serve [options]`, `wharf admin keys rotate [options]`…) with its description. A client
 * group whose commands are not loaded appears as itself (`wharf iam <command> …`: its --help
 * lists them).
 */
export function commandIndex(root: Command): string {
  const lines = [
    "Every command (each answers -h/--help; exit codes: 0 ok, 1 error, 2 usage, 4 not found, 5 denied):",
  ];
  for (const command of allCommands(root).slice(1)) {
    if (command.commands.length > 0) continue;
    // A client group whose commands are not loaded: its own --help lists them.
    const path = commandPath(command);
    const unloaded = isClientGroup(command.name()) && path === `wharf ${command.name()}`;
    lines.push(`  ${path} ${unloaded ? "<command> … (see its --help)" : command.usage()}`);
    lines.push(...wrap(command.description(), HELP_WIDTH - 6).map((line) => `      ${line}`));
  }
  return `${lines.join("\n")}\n`;
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}
