/** One command of the usage text: the words naming it and its lines (continuations included). */
export interface UsageEntry {
  /** `["admin", "token"]` for `  wharf admin token [--ttl 1h] …`. */
  words: string[];
  text: string;
}

/**
 * The commands of a usage text: each line `  wharf <words> …` with the lines indented further
 * that follow it. The words are the leading lower-case tokens (`wharf help | version` is `help`).
 */
export function usageEntries(usage: string): UsageEntry[] {
  const entries: UsageEntry[] = [];
  let current: UsageEntry | undefined;
  for (const line of usage.split("\n")) {
    const command = /^ {2}wharf (.*)$/.exec(line);
    if (command) {
      const words: string[] = [];
      for (const token of (command[1] as string).split(/\s+/)) {
        if (!/^[a-z][a-z-]*$/.test(token)) break;
        words.push(token);
      }
      current = { words, text: `${line}\n` };
      entries.push(current);
    } else if (current && /^ {4,}\S/.test(line)) {
      current.text += `${line}\n`;
    } else {
      current = undefined;
    }
  }
  return entries;
}

/**
 * The help `argv` asks for, or undefined when it asks for none: `wharf <words…> -h|--help` (before
 * any `--`) and `wharf help <words…>` print the usage entries of the command the words name (the
 * entries whose words start with them: `wharf auth -h` shows every auth command), followed by
 * `options` when an entry takes `[options]`. Undefined too when no entry matches (the caller
 * reports the unknown command) or no words are given (the caller prints the whole usage).
 */
export function commandHelp(usage: string, options: string, argv: readonly string[]): string | undefined {
  const end = argv.indexOf("--");
  const args = end < 0 ? argv : argv.slice(0, end);
  const asked = args.includes("-h") || args.includes("--help");
  // `wharf help gc` asks about gc; `wharf help -h` about help itself.
  const named = asked ? args : args[0] === "help" ? args.slice(1) : undefined;
  if (named === undefined) return undefined;
  const words: string[] = [];
  for (const arg of named) {
    if (arg.startsWith("-")) break;
    words.push(arg);
  }
  if (words.length === 0) return undefined;
  const entries = usageEntries(usage);
  const startsWith = (longer: string[], prefix: string[]) => prefix.every((w, i) => longer[i] === w);
  // The most specific: the entries the words name exactly (plus extra words), else a group.
  let matching = entries.filter((e) => e.words.length > 0 && startsWith(words, e.words));
  if (matching.length === 0) matching = entries.filter((e) => startsWith(e.words, words));
  if (matching.length === 0) return undefined;
  const text = matching.map((e) => e.text).join("");
  return `Usage:\n${text}${text.includes("[options]") ? `\n${options}` : ""}`;
}
