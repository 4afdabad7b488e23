import { storedLogin } from "../../sdk/node/stored-login.js";
import { exchangeToken, fetchServerConfig } from "../../sdk/sts.js";
import { staticToken, type TokenSource } from "../../sdk/token-sources.js";
import { readCliConfig } from "./docker-config.js";

/** Where the helper reads and writes. */
export interface HelperIo {
  stdin: AsyncIterable<Buffer | string>;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

async function readAll(stdin: AsyncIterable<Buffer | string>): Promise<string> {
  let text = "";
  for await (const chunk of stdin) text += chunk.toString();
  return text.trim();
}

/** `registry.example.com:5000` from `https://registry.example.com:5000/v1/` or a bare host. */
export function hostOf(serverUrl: string): string {
  try {
    return new URL(serverUrl.includes("://") ? serverUrl : `https://${serverUrl}`).host;
  } catch {
    return serverUrl;
  }
}

/**
 * `docker-credential-wharf get|store|erase|list` (the docker credential helper protocol). `get`
 * reads a registry host on stdin and prints `{ServerURL, Username: "_token", Secret}` where Secret
 * is a token for that registry's audience, exchanged at the STS from WHARF_TOKEN or the stored
 * `wharf auth login` of the API that serves the registry (recorded by `wharf auth configure-docker`).
 * `store` and `erase` do nothing (the login is Wharf's own); `list` names the configured hosts.
 * Resolves to the exit code; errors go to stdout as the protocol asks.
 */
export async function runCredentialHelper(argv: string[], io: HelperIo): Promise<number> {
  const [action] = argv;
  const config = await readCliConfig(io.env);
  try {
    switch (action) {
      case "get": {
        const serverUrl = await readAll(io.stdin);
        const host = hostOf(serverUrl);
        const apiUrl = config.registries?.[host];
        if (!apiUrl) {
          io.stdout.write("credentials not found in native keychain\n");
          return 1;
        }
        const source: TokenSource = io.env.WHARF_TOKEN
          ? staticToken(io.env.WHARF_TOKEN)
          : storedLogin({ apiUrl, env: io.env });
        const { registryUrl } = await fetchServerConfig(apiUrl);
        const issued = await exchangeToken(apiUrl, await source.token(), { audience: [registryUrl] });
        io.stdout.write(
          `${JSON.stringify({ ServerURL: serverUrl, Username: "_token", Secret: issued.token })}\n`,
        );
        return 0;
      }
      case "list": {
        const hosts = Object.keys(config.registries ?? {});
        io.stdout.write(`${JSON.stringify(Object.fromEntries(hosts.map((h) => [h, "_token"])))}\n`);
        return 0;
      }
      case "store":
      case "erase":
        await readAll(io.stdin);
        return 0;
      default:
        io.stderr.write("usage: docker-credential-wharf get|store|erase|list\n");
        return 2;
    }
  } catch (err) {
    io.stdout.write(`${(err as Error).message}\n`);
    return 1;
  }
}
