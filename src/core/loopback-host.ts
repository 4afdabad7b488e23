const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * True for `localhost`, 127.0.0.0/8 and `[::1]` (a URL's `hostname`, brackets included): the hosts
 * where a plain `http:` URL (an upstream issuer, a login redirect, a webhook sink) stays on this machine.
 */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}
