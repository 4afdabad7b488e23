import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { configDir } from "../../sdk/node/stored-credentials.js";

/** The name docker and containers tools append to `docker-credential-` to find the helper. */
export const CREDENTIAL_HELPER = "wharf";

/** `~/.docker/config.json` (or `$DOCKER_CONFIG/config.json`). */
export function dockerConfigFile(env: NodeJS.ProcessEnv): string {
  return join(env.DOCKER_CONFIG || join(env.HOME || homedir(), ".docker"), "config.json");
}

/**
 * The containers tools' (podman, skopeo, buildah) auth file: REGISTRY_AUTH_FILE, else
 * `$XDG_RUNTIME_DIR/containers/auth.json`, else `~/.config/containers/auth.json`.
 */
export function containersAuthFile(env: NodeJS.ProcessEnv): string {
  if (env.REGISTRY_AUTH_FILE) return env.REGISTRY_AUTH_FILE;
  if (env.XDG_RUNTIME_DIR) return join(env.XDG_RUNTIME_DIR, "containers", "auth.json");
  return join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config"), "containers", "auth.json");
}

async function readJson(file: string): Promise<Record<string, unknown>> {
  try {
    const parsed = JSON.parse(await readFile(file, "utf8")) as unknown;
    return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new Error(`cannot read ${file}: ${(err as Error).message}`);
  }
}

async function writeJson(file: string, value: unknown): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, file);
}

/**
 * Adds `credHelpers[host] = "wharf"` to a docker-style config file, keeping everything else in it
 * (other helpers, stored auths); an `auths` entry for the host would win over the helper in some
 * tools, so it is removed.
 */
export async function addCredentialHelper(file: string, host: string): Promise<void> {
  const config = await readJson(file);
  const helpers = (config.credHelpers ?? {}) as Record<string, string>;
  helpers[host] = CREDENTIAL_HELPER;
  config.credHelpers = helpers;
  const auths = config.auths as Record<string, unknown> | undefined;
  if (auths && host in auths) delete auths[host];
  await writeJson(file, config);
}

function cliConfigFile(env: NodeJS.ProcessEnv): string {
  return join(configDir(env), "config.json");
}

/** The CLI's own config: the default API URL and which API serves each registry host. */
export interface CliConfig {
  apiUrl?: string;
  registries?: Record<string, string>;
}

/** Reads the CLI's config file (`<config dir>/config.json`); empty when there is none. */
export async function readCliConfig(env: NodeJS.ProcessEnv): Promise<CliConfig> {
  return (await readJson(cliConfigFile(env))) as CliConfig;
}

/** Records that `host`'s registry takes tokens of `apiUrl` (for the credential helper). */
export async function rememberRegistry(env: NodeJS.ProcessEnv, host: string, apiUrl: string): Promise<void> {
  const config = await readCliConfig(env);
  config.registries = { ...config.registries, [host]: apiUrl };
  config.apiUrl ??= apiUrl;
  await writeJson(cliConfigFile(env), config);
}
