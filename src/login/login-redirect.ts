import { invalidArgument } from "../core/errors.js";
import { isLoopbackHost } from "../core/loopback-host.js";

/** Where the web console takes a browser login's one-time code (a page of the console). */
export const CONSOLE_LOGIN_CALLBACK_PATH = "/login/callback";

/**
 * The `redirect` of a browser login, checked: a loopback http(s) URL (the CLI's callback), or the
 * web console's callback page on this server (`<apiUrl>/login/callback`, same origin). Anything
 * else is INVALID_ARGUMENT on `redirect`: the login's one-time code must not be handed to
 * another host.
 */
export function checkLoginRedirect(value: string, apiUrl: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidArgument("redirect", "must be an absolute URL");
  }
  if (url.username || url.password) throw invalidArgument("redirect", "must not carry credentials");
  if (url.origin === new URL(apiUrl).origin && url.pathname === CONSOLE_LOGIN_CALLBACK_PATH) {
    return url.toString();
  }
  const loopback = isLoopbackHost(url.hostname);
  if (!loopback || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw invalidArgument(
      "redirect",
      `must be a loopback URL (http://127.0.0.1:<port>/…) of the CLI, or this server's ${CONSOLE_LOGIN_CALLBACK_PATH}`,
    );
  }
  return url.toString();
}
