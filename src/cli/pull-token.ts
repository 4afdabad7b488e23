import { parseArgs } from "node:util";
import { ConfigError } from "../config/config.js";
import { parseDurationSeconds } from "../core/duration.js";
import { createPullToken, MAX_PULL_TOKEN_TTL_SECONDS, revokePullToken } from "../federation/pull-token.js";
import { PULL_TOKEN_USAGE } from "./usage.js";

/**
 * `wharf auth pull-token create|revoke`: creates a pull token through the API (see createPullToken)
 * and prints `username` and `password` and how to use them, or revokes one (revokePullToken).
 * Resolves to the exit code.
 */
export async function runPullToken(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === "create") return create(rest, env);
  if (sub === "revoke") return revoke(rest, env);
  process.stderr.write(`wharf auth pull-token: unknown subcommand "${sub ?? ""}"\n\n${PULL_TOKEN_USAGE}`);
  return 2;
}

/** The API URL and token of a pull-token command: flags, then WHARF_API_URL / WHARF_TOKEN. */
function apiAccess(values: { "api-url"?: string; token?: string }, env: NodeJS.ProcessEnv) {
  const token = values.token || env.WHARF_TOKEN || "";
  if (!token)
    throw new ConfigError("a token is needed: --token or WHARF_TOKEN (e.g. from `wharf auth token`)");
  return { apiUrl: values["api-url"] || env.WHARF_API_URL || "http://127.0.0.1:8080", token };
}

async function create(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      parent: { type: "string" },
      ttl: { type: "string" },
      name: { type: "string" },
      "api-url": { type: "string" },
      token: { type: "string" },
    },
    strict: true,
  });
  if (!values.parent) throw new ConfigError("--parent (the organization uid) is required");
  const ttlSeconds = parseDurationSeconds(values.ttl ?? "720h");
  if (ttlSeconds === undefined || ttlSeconds > MAX_PULL_TOKEN_TTL_SECONDS) {
    throw new ConfigError(`--ttl must be a duration up to 8760h, like 720h or 7d (got "${values.ttl}")`);
  }
  const { apiUrl, token } = apiAccess(values, env);
  try {
    const pull = await createPullToken({
      apiUrl,
      token,
      parent: values.parent,
      ttlSeconds,
      ...(values.name ? { name: values.name } : {}),
    });
    const host = new URL(pull.registryUrl).host;
    process.stdout.write(
      [
        `username: ${pull.username}`,
        `password: ${pull.password}`,
        `expires:  ${pull.expiry}`,
        "",
        `  docker login ${host} --username '${pull.username}' --password-stdin <<< '<password>'`,
        `  skopeo copy --src-creds '${pull.username}:<password>' docker://${host}/<org>/<repo>:<tag> …`,
        `Revoke it with: wharf auth pull-token revoke --identity ${pull.username}`,
        "",
      ].join("\n"),
    );
    return 0;
  } catch (err) {
    process.stderr.write(`wharf auth pull-token create: ${(err as Error).message}\n`);
    return 1;
  }
}

async function revoke(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      identity: { type: "string" },
      "api-url": { type: "string" },
      token: { type: "string" },
    },
    strict: true,
  });
  if (!values.identity) throw new ConfigError("--identity (the pull token's username) is required");
  const { apiUrl, token } = apiAccess(values, env);
  try {
    const bindings = await revokePullToken({ apiUrl, token, identityUid: values.identity });
    process.stdout.write(
      `revoked: identity ${values.identity} deleted, after its ${bindings} role binding${bindings === 1 ? "" : "s"}\n`,
    );
    return 0;
  } catch (err) {
    process.stderr.write(`wharf auth pull-token revoke: ${(err as Error).message}\n`);
    return 1;
  }
}
