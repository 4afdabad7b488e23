import type { Socket } from "node:net";
import { createSecureContext, createServer, type Server, type TLSSocket } from "node:tls";

/** A certificate (chain) and its private key, PEM. */
export interface TlsPair {
  cert: string | Buffer;
  key: string | Buffer;
}

/** The oldest protocol version a listener accepts. */
export const TLS_MIN_VERSION = "TLSv1.2";

/** What ALPN offers, in order of preference: HTTP/2 (gRPC needs it), then HTTP/1.1. */
export const TLS_ALPN_PROTOCOLS: readonly string[] = ["h2", "http/1.1"];

/**
 * Terminates TLS on the sockets listeners accept, with a certificate that can be swapped while
 * they run: a connection keeps the certificate it was accepted with, a new one gets the current.
 */
export interface TlsTerminator {
  /**
   * The TLS side of one listener: hand each accepted socket (nothing read from it yet) to the
   * returned function; `onSecure` receives the TLS socket once its handshake is done, its
   * `alpnProtocol` then `"h2"`, `"http/1.1"` or false (no ALPN: HTTP/1.1). A handshake that fails
   * or takes longer than `handshakeTimeoutMs` closes the socket, unreported.
   */
  terminate(onSecure: (socket: TLSSocket) => void, handshakeTimeoutMs: number): (raw: Socket) => void;
  /**
   * Serves `pair` to connections accepted from now on, on every listener. Throws (and keeps the
   * current pair) when the pair does not make a secure context (a bad PEM, a key of another
   * certificate).
   */
  reload(pair: TlsPair): void;
}

/**
 * A terminator serving `pair`, TLS 1.2 at least, ALPN `h2` then `http/1.1`. Throws when the pair
 * does not make a secure context. Each listener gets a `tls.Server` that never listens: the
 * listener injects the sockets it accepted (its `connection` event), and reload is the server's
 * `setSecureContext`.
 */
export function createTlsTerminator(pair: TlsPair): TlsTerminator {
  let options = secureOptionsOf(pair);
  const servers = new Set<Server>();
  return {
    terminate(onSecure, handshakeTimeoutMs) {
      const server = createServer({
        ...options,
        ALPNProtocols: [...TLS_ALPN_PROTOCOLS],
        handshakeTimeout: handshakeTimeoutMs,
      });
      server.on("secureConnection", onSecure);
      // A client that fails its handshake (an old protocol, an unknown CA on its side) is closed
      // by node; nothing to report per connection.
      server.on("tlsClientError", () => {});
      servers.add(server);
      return (raw) => {
        server.emit("connection", raw);
      };
    },
    reload(next) {
      const nextOptions = secureOptionsOf(next);
      for (const server of servers) server.setSecureContext(nextOptions);
      options = nextOptions;
    },
  };
}

/** The secure context options of `pair`; throws when they make no context. */
function secureOptionsOf(pair: TlsPair) {
  const options = { cert: pair.cert, key: pair.key, minVersion: TLS_MIN_VERSION } as const;
  createSecureContext(options);
  return options;
}
