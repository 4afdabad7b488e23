import type { Command } from "commander";
import type { BindFor } from "./program.js";
import { subcommand } from "./program.js";
import { CLIENT_GROUPS, type ClientGroup, commandWords, isClientGroup } from "./routing.js";

type Register = (program: Command, bindFor: BindFor) => void;

/**
 * The command groups' registrations, each loaded only when used: a group's module imports its
 * generated services and views, and a cold process pays for every module it loads (bench:cli).
 */
const GROUPS: Record<ClientGroup, () => Promise<Register>> = {
  iam: async () => (await import("./commands/iam/index.js")).registerIam,
  images: async () => (await import("./commands/images.js")).registerImages,
  libraries: async () => (await import("./commands/libraries.js")).registerLibraries,
  events: async () => (await import("./commands/events.js")).registerEvents,
  auth: async () => (await import("./commands/auth.js")).registerAuth,
  vulns: async () => (await import("./commands/vulns.js")).registerVulns,
  advisories: async () => (await import("./commands/advisories.js")).registerAdvisories,
  audit: async () => (await import("./commands/audit.js")).registerAudit,
  upstreams: async () => (await import("./commands/upstreams.js")).registerUpstreams,
  policies: async () => (await import("./commands/policies.js")).registerPolicies,
  replication: async () => (await import("./commands/replication.js")).registerReplication,
  "signing-keys": async () => (await import("./commands/signing-keys.js")).registerSigningKeys,
};

/** The client group a command line runs, if any (`wharf --api-url U iam …` runs `iam`). */
export function clientGroupOf(argv: readonly string[]): ClientGroup | undefined {
  const [first] = commandWords(argv);
  return isClientGroup(first) ? first : undefined;
}

/**
 * Adds the client groups to `program`: every group's command with its description (so help lists
 * them all), and the subcommands of `load` ("all", or the one group a command line runs).
 */
export async function registerClientGroups(
  program: Command,
  bindFor: BindFor,
  load: "all" | ClientGroup | undefined,
): Promise<void> {
  for (const name of Object.keys(CLIENT_GROUPS) as ClientGroup[]) {
    if (load === "all" || load === name) (await GROUPS[name]())(program, bindFor);
    else subcommand(program, name, CLIENT_GROUPS[name]);
  }
}
