import type { Command } from "commander";

/** Words a command takes next: its subcommands and its long options. */
function nextWords(command: Command): string[] {
  return [
    ...command.commands.flatMap((c) => [c.name(), ...c.aliases()]),
    ...command.options.map((o) => o.long).filter((l): l is string => l !== undefined),
  ];
}

/**
 * Every command path of the tree (`wharf`, `wharf iam`, `wharf iam roles`…) with the words it
 * takes next; `extra` adds words of commands outside the tree (the server-side ones).
 */
export function completionTable(root: Command, extra: Record<string, string[]> = {}): Map<string, string[]> {
  const table = new Map<string, string[]>();
  const walk = (command: Command, path: string) => {
    table.set(path, [...(table.get(path) ?? []), ...nextWords(command)]);
    for (const child of command.commands) {
      for (const name of [child.name(), ...child.aliases()]) walk(child, `${path} ${name}`);
    }
  };
  walk(root, "wharf");
  for (const [path, words] of Object.entries(extra))
    table.set(path, [...new Set([...(table.get(path) ?? []), ...words])]);
  return table;
}

const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

/** A bash completion script for `wharf` (bash 4+: an associative array of the command tree). */
export function bashCompletion(table: Map<string, string[]>): string {
  const entries = [...table].map(([path, words]) => `  [${quote(path)}]=${quote(words.join(" "))}`);
  return `# bash completion for wharf: source <(wharf completion bash)
declare -gA _wharf_words=(
${entries.join("\n")}
)
_wharf() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="wharf" w i
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ -n "\${_wharf_words[$path $w]+set}" ]] && path="$path $w"
  done
  COMPREPLY=($(compgen -W "\${_wharf_words[$path]}" -- "$cur"))
}
complete -F _wharf wharf
`;
}

/** A zsh completion script for `wharf` (the same tree as {@link bashCompletion}). */
export function zshCompletion(table: Map<string, string[]>): string {
  const entries = [...table].map(([path, words]) => `  ${quote(path)} ${quote(words.join(" "))}`);
  return `#compdef wharf
# zsh completion for wharf: source <(wharf completion zsh), or save it as _wharf in your $fpath
typeset -gA _wharf_words
_wharf_words=(
${entries.join("\n")}
)
_wharf() {
  local cmdpath="wharf" w
  for w in \${words[2,CURRENT-1]}; do
    (( \${+_wharf_words[$cmdpath $w]} )) && cmdpath="$cmdpath $w"
  done
  local -a candidates
  candidates=(\${=_wharf_words[$cmdpath]})
  compadd -- $candidates
}
compdef _wharf wharf
`;
}
