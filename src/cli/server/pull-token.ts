import { ConfigError } from "../../config/config.js";
import { parseDurationSeconds } from "../../core/duration.js";
import { createPullToken, MAX_PULL_TOKEN_TTL_SECONDS, revokePullToken } from "../../federation/pull-token.js";

/** The options of `wharf auth pull-token create` and `revoke` (`--api-url`, `--token` are global). */
export interface PullTokenOptions {
  parent?: string;
  ttl?: string;
  name?: string;
  identity?: string;
  apiUrl?: string;
  token?: string;
}

/** Where a pull-token command writes (default: the process's stdout and stderr). */
export interface PullTokenIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

const processIo = (): PullTokenIo => ({ stdout: process.stdout, stderr: process.stderr });

/** The API URL and token of a pull-token command: flags, then WHARF_API_URL / WHARF_TOKEN. */
function apiAccess(values: PullTokenOptions, env: NodeJS.ProcessEnv) {
  const token = values.token || env.WHARF_TOKEN || "";
  if (!token)
    throw new ConfigError("a token is needed: --token or WHARF_TOKEN (e.g. from `wharf auth token`)");
  return { apiUrl: values.apiUrl || env.WHARF_API_URL || "http://127.0.0.1:8080", token };
}

/**
 * `wharf auth pull-token create`: creates a pull token through the API (see createPullToken) and
 * prints `username` and `password` and how to use them. Resolves to the exit code; bad flags are a
 * ConfigError (exit 2).
 */
export async function runPullTokenCreate(
  values: PullTokenOptions,
  env: NodeJS.ProcessEnv = process.env,
  io: PullTokenIo = processIo(),
): Promise<number> {
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
    io.stdout.write(
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
    io.stderr.write(`wharf auth pull-token create: ${(err as Error).message}\n`);
    return 1;
  }
}

/**
 * `wharf auth pull-token revoke`: deletes the identity's role bindings, then the identity
 * (revokePullToken). Resolves to the exit code; bad flags are a ConfigError (exit 2).
 */
export async function runPullTokenRevoke(
  values: PullTokenOptions,
  env: NodeJS.ProcessEnv = process.env,
  io: PullTokenIo = processIo(),
): Promise<number> {
  if (!values.identity) throw new ConfigError("--identity (the pull token's username) is required");
  const { apiUrl, token } = apiAccess(values, env);
  try {
    const bindings = await revokePullToken({ apiUrl, token, identityUid: values.identity });
    io.stdout.write(
      `revoked: identity ${values.identity} deleted, after its ${bindings} role binding${bindings === 1 ? "" : "s"}\n`,
    );
    return 0;
  } catch (err) {
    io.stderr.write(`wharf auth pull-token revoke: ${(err as Error).message}\n`);
    return 1;
  }
}
