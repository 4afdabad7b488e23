// The client command groups and which of them a command line needs: kept apart (no imports) so the
// `wharf` tree lists every group in its help without loading any of them.

/** Each client group (first word after `wharf`) and its one-line description. */
export const CLIENT_GROUPS = {
  iam: "identity and access: organizations, identities, roles…",
  images: "repositories, tags and images",
  libraries: "language libraries (Java, Python, JavaScript)",
  events: "CloudEvents webhooks",
  auth: "who you are, tokens, docker and pull credentials",
  vulns: "vulnerability reports of images",
  advisories: "security advisories: what a distributor says about a vulnerability in an artifact",
  audit: "the audit log: who did what, allowed or refused",
  upstreams: "pull-through cache upstreams of organizations",
  policies: "pull policies: signatures, vulnerabilities, end of life and SBOMs a pull must pass",
  replication: "replication rules and runs: copy images to and from other registries",
  "signing-keys": "public keys trusted to sign images, at organizations, folders and repos",
} as const;

/** A client group's name. */
export type ClientGroup = keyof typeof CLIENT_GROUPS;

/** True when `word` names a client group. */
export function isClientGroup(word: string | undefined): word is ClientGroup {
  return word !== undefined && Object.hasOwn(CLIENT_GROUPS, word);
}

/** Global flags that take a value (so the value is not taken for a word). */
const VALUE_FLAGS = new Set(["--api-url", "--token", "--timeout", "-o", "--output"]);

/** The command words of `argv`: global flags before them (and their values) skipped. */
export function commandWords(argv: readonly string[]): string[] {
  let i = 0;
  while (i < argv.length && (argv[i] as string).startsWith("-"))
    i += VALUE_FLAGS.has(argv[i] as string) ? 2 : 1;
  return argv.slice(i);
}
