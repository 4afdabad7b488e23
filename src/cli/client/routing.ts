// Which command lines the client tree answers: kept apart so main.ts decides without loading it.

/** The first words (after `wharf`) that this client tree answers. */
export const CLIENT_NOUNS = [
  "iam",
  "images",
  "libraries",
  "events",
  "vulns",
  "advisories",
  "completion",
] as const;

/**
 * True when `argv` (without `wharf`) is a client command: a client noun, or one of the client
 * verbs of `auth` (status, configure-docker, token --audience, pull-token list|delete).
 */
export function isClientCommand(argv: readonly string[]): boolean {
  const [first, second, third] = wordsOf(argv);
  if ((CLIENT_NOUNS as readonly string[]).includes(first ?? "")) return true;
  if (first !== "auth") return false;
  if (second === "status" || second === "configure-docker") return true;
  if (second === "token") return argv.some((a) => a === "--audience" || a.startsWith("--audience="));
  return second === "pull-token" && (third === "list" || third === "delete");
}

/** Global flags of the client tree that take a value (so the value is not taken for a word). */
const VALUE_FLAGS = new Set(["--api-url", "--token", "--timeout", "-o", "--output"]);

/** The command words of `argv`: global flags before them (and their values) skipped. */
function wordsOf(argv: readonly string[]): string[] {
  let i = 0;
  while (i < argv.length && (argv[i] as string).startsWith("-"))
    i += VALUE_FLAGS.has(argv[i] as string) ? 2 : 1;
  return argv.slice(i);
}
