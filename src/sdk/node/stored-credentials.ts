import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

/** What `wharf auth login` keeps for one API URL. */
export interface StoredCredentials {
  token: string;
  /** RFC 3339 expiry of `token`. */
  expiry: string;
  refreshToken?: string;
}

/**
 * The folder of the CLI's files: WHARF_CONFIG_DIR, else `$XDG_CONFIG_HOME/wharf`, else
 * `~/.config/wharf`.
 */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.WHARF_CONFIG_DIR) return env.WHARF_CONFIG_DIR;
  return join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "wharf");
}

function credentialsFile(env: NodeJS.ProcessEnv): string {
  return join(configDir(env), "credentials.json");
}

async function readAll(env: NodeJS.ProcessEnv): Promise<Record<string, StoredCredentials>> {
  try {
    const parsed = JSON.parse(await readFile(credentialsFile(env), "utf8")) as unknown;
    return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, StoredCredentials>) : {};
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new Error(`cannot read ${credentialsFile(env)}: ${(err as Error).message}`);
  }
}

/** The credentials stored for `apiUrl`, if any. */
export async function loadCredentials(
  apiUrl: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<StoredCredentials | undefined> {
  return (await readAll(env))[apiUrl];
}

/**
 * Stores (or, with `undefined`, forgets) the credentials of `apiUrl`. The file is private to the
 * user (0600, folder 0700) and replaced atomically, so a crash never leaves half a file.
 */
export async function saveCredentials(
  apiUrl: string,
  credentials: StoredCredentials | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const all = await readAll(env);
  if (credentials === undefined) delete all[apiUrl];
  else all[apiUrl] = credentials;
  const dir = configDir(env);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = credentialsFile(env);
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
  await chmod(temp, 0o600);
  await rename(temp, file);
}
