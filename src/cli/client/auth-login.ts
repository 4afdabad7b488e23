import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { loadCredentials, saveCredentials } from "../../sdk/node/stored-credentials.js";
import { storedToken } from "../../sdk/node/stored-login.js";

/** How long `wharf auth login` waits for the browser to come back. */
const LOGIN_TIMEOUT_MS = 5 * 60_000;

/** Options of `wharf auth login`. */
export interface LoginOptions {
  apiUrl: string;
  identityProvider: string;
  audience: string;
  /** Passed to the identity provider as `login_hint` (e.g. an email); "" for none. */
  loginHint?: string;
  /** Open the browser (false: only print the URL). */
  browser: boolean;
  /** Where progress goes (the URL to open, who logged in). */
  print: (line: string) => void;
  timeoutMs?: number;
}

/**
 * `wharf auth login`: listens on a loopback port, sends the browser to the server's `/oauth` with
 * a PKCE challenge, waits for the server to redirect back with a one-time code, redeems it with the
 * verifier at `/oauth/token`, and stores the tokens for `apiUrl`. Resolves to the identity uid.
 */
export async function login(opts: LoginOptions): Promise<string> {
  const verifier = randomBytes(32).toString("base64url");
  const state = randomBytes(16).toString("base64url");
  const { server, port, callback } = await listenForCallback(state, opts.timeoutMs ?? LOGIN_TIMEOUT_MS);
  try {
    const url = new URL("/oauth", opts.apiUrl);
    url.search = new URLSearchParams({
      redirect: `http://127.0.0.1:${port}/callback`,
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
      state,
      ...(opts.identityProvider ? { identity_provider: opts.identityProvider } : {}),
      ...(opts.audience ? { audience: opts.audience } : {}),
      ...(opts.loginHint ? { login_hint: opts.loginHint } : {}),
    }).toString();
    opts.print(`Open this URL in a browser to log in:\n  ${url}`);
    if (opts.browser) openBrowser(url.toString());
    const code = await callback;
    const tokens = await postForm<{ token: string; expiry: string; refreshToken?: string }>(
      new URL("/oauth/token", opts.apiUrl),
      { code, code_verifier: verifier },
    );
    await saveCredentials(opts.apiUrl, tokens);
    const subject = subjectOf(tokens.token);
    opts.print(`Logged in to ${opts.apiUrl} as ${subject}`);
    return subject;
  } finally {
    server.close();
  }
}

/**
 * `wharf auth token`: the stored token for `apiUrl`, refreshed through `/sts/exchange_refresh_token`
 * when it expires within a minute and a refresh token is stored (the SDK's `storedToken`). Throws
 * when there is none.
 */
export function currentToken(apiUrl: string, now = Date.now()): Promise<string> {
  return storedToken({ apiUrl, now: () => now });
}

/** `wharf auth logout`: forgets the stored tokens of `apiUrl`; false when there were none. */
export async function logout(apiUrl: string): Promise<boolean> {
  const had = (await loadCredentials(apiUrl)) !== undefined;
  await saveCredentials(apiUrl, undefined);
  return had;
}

function listenForCallback(
  state: string,
  timeoutMs: number,
): Promise<{ server: Server; port: number; callback: Promise<string> }> {
  let settle!: { resolve: (code: string) => void; reject: (err: Error) => void };
  const callback = new Promise<string>((resolve, reject) => {
    settle = { resolve, reject };
  });
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/callback") {
      res.writeHead(404).end();
      return;
    }
    const finish = (status: number, message: string) => {
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8" }).end(`${message}\n`);
    };
    if (url.searchParams.get("state") !== state) {
      finish(400, "This login is not the one this terminal started.");
      return;
    }
    const error = url.searchParams.get("error");
    if (error) {
      finish(400, "Login failed; see your terminal.");
      const description = url.searchParams.get("error_description");
      settle.reject(new Error(`login failed: ${error}${description ? `: ${description}` : ""}`));
      return;
    }
    finish(200, "Logged in to Wharf. You can close this window.");
    settle.resolve(url.searchParams.get("code") ?? "");
  });
  const timer = setTimeout(
    () => settle.reject(new Error("timed out waiting for the browser login")),
    timeoutMs,
  );
  callback.finally(() => clearTimeout(timer)).catch(() => {});
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      resolve({ server, port: (server.address() as AddressInfo).port, callback });
    });
  });
}

async function postForm<T>(url: URL, form: Record<string, string>, bearer?: string): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
    },
    body: new URLSearchParams(form),
  });
  const body = (await response.json().catch(() => ({}))) as { message?: string };
  if (!response.ok) throw new Error(body.message ?? `HTTP ${response.status}`);
  return body as T;
}

/** The `sub` of a JWT (not verified: only for display; the server verified it). */
function subjectOf(token: string): string {
  try {
    const payload = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8"));
    return typeof payload.sub === "string" ? payload.sub : "?";
  } catch {
    return "?";
  }
}

function openBrowser(url: string): void {
  const command =
    process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  try {
    const child = spawn(command, [url], { stdio: "ignore", detached: true });
    child.on("error", () => {}); // no browser here: the printed URL is enough
    child.unref();
  } catch {
    // same
  }
}
