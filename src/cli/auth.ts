import { parseArgs } from "node:util";

/** Usage lines of `wharf auth …`, for the main usage text. */
export const AUTH_USAGE = `  wharf auth login [--api-url URL] [--identity-provider UID] [--audience URL] [--no-browser]
                                        log in through the browser; keeps the tokens for later commands
  wharf auth token [--api-url URL]      print a valid token (refreshing it when needed)
  wharf auth logout [--api-url URL]     forget the stored tokens
`;

/** The API the CLI talks to: --api-url, else WHARF_API_URL, else the embedded default. */
export function apiUrlOf(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const value = flag || env.WHARF_API_URL || "http://127.0.0.1:8080";
  return new URL(value).origin;
}

/**
 * Runs `wharf auth <sub> …`; resolves to the exit code, or undefined for an unknown subcommand (the
 * caller prints usage). Failures print one line and exit 1.
 */
export async function runAuth(args: string[]): Promise<number | undefined> {
  const [sub, ...rest] = args;
  const print = (line: string) => process.stderr.write(`${line}\n`);
  try {
    switch (sub) {
      case "login": {
        const { values } = parseArgs({
          args: rest,
          options: {
            "api-url": { type: "string" },
            "identity-provider": { type: "string" },
            audience: { type: "string" },
            "no-browser": { type: "boolean" },
          },
          strict: true,
        });
        const { login } = await loginModule();
        await login({
          apiUrl: apiUrlOf(values["api-url"]),
          identityProvider: values["identity-provider"] ?? "",
          audience: values.audience ?? "",
          browser: values["no-browser"] !== true,
          print,
        });
        return 0;
      }
      case "token": {
        const { values } = parseArgs({
          args: rest,
          options: { "api-url": { type: "string" } },
          strict: true,
        });
        const { currentToken } = await loginModule();
        process.stdout.write(`${await currentToken(apiUrlOf(values["api-url"]))}\n`);
        return 0;
      }
      case "logout": {
        const { values } = parseArgs({
          args: rest,
          options: { "api-url": { type: "string" } },
          strict: true,
        });
        const apiUrl = apiUrlOf(values["api-url"]);
        const { logout } = await loginModule();
        print((await logout(apiUrl)) ? `Logged out of ${apiUrl}` : `Not logged in to ${apiUrl}`);
        return 0;
      }
      default:
        return undefined;
    }
  } catch (err) {
    // Usage errors go up to print the usage; an SDK error's code is a number, never one of them.
    const code = (err as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS")) throw err;
    print(`wharf auth ${sub}: ${(err as Error).message}`);
    return 1;
  }
}

/**
 * The login code, loaded when an auth command runs: it brings the SDK and Connect, which
 * `wharf --help`, `serve` and the other commands that only import this module's usage never need
 * (they cost a cold process ~70 ms).
 */
function loginModule(): Promise<typeof import("./auth-login.js")> {
  return import("./auth-login.js");
}
