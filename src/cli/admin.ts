import type { ParseArgsConfig } from "node:util";
import type { ConfigInput } from "../config/config.js";
import { ADMIN_KEYS_USAGE, ADMIN_TOKEN_USAGE, ADMIN_TOKENS_USAGE } from "./usage.js";

/** Usage lines of every `wharf admin …` command. */
export const ADMIN_USAGE = `${ADMIN_TOKEN_USAGE}${ADMIN_KEYS_USAGE}${ADMIN_TOKENS_USAGE}`;

/** The flags an admin command parses besides the configuration flags, and `-h`/`--help`. */
type CommandOptions = NonNullable<ParseArgsConfig["options"]>;

/** One `wharf admin …` command: its flags and usage, and how to run it once they are parsed. */
export interface AdminCommand {
  /** The arguments left after the command's words. */
  args: string[];
  options: CommandOptions;
  usage: string;
  run(config: ConfigInput, values: Readonly<Record<string, unknown>>): Promise<number>;
}

const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/**
 * The admin command `argv` (the words after `admin`) names, or undefined for an unknown one:
 * `token`, `keys rotate`, `keys list`, `tokens revoke`. Its module loads when it runs.
 */
export function adminCommand(argv: readonly string[]): AdminCommand | undefined {
  const [first, second, ...more] = argv;
  if (first === "token") {
    return {
      args: argv.slice(1),
      options: { ttl: { type: "string" }, audience: { type: "string" } },
      usage: ADMIN_TOKEN_USAGE,
      run: async (config, values) =>
        (await import("./admin-token.js")).runAdminToken(config, {
          ttl: text(values.ttl) ?? "1h",
          audience: text(values.audience) ?? "api",
        }),
    };
  }
  if (first === "keys" && (second === "rotate" || second === "list")) {
    return {
      args: more,
      options: {},
      usage: ADMIN_KEYS_USAGE,
      run: async (config) => {
        const keys = await import("./admin-keys.js");
        return second === "rotate" ? keys.runAdminKeysRotate(config) : keys.runAdminKeysList(config);
      },
    };
  }
  if (first === "tokens" && second === "revoke") {
    return {
      args: more,
      options: { subject: { type: "string" }, "issued-before": { type: "string" } },
      usage: ADMIN_TOKENS_USAGE,
      run: async (config, values) =>
        (await import("./admin-tokens.js")).runAdminTokensRevoke(config, {
          subject: text(values.subject),
          issuedBefore: text(values["issued-before"]),
        }),
    };
  }
  return undefined;
}
