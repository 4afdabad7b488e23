import type { Socket } from "node:net";
import { createSecureContext, type SecureContext, TLSSocket } from "node:tls";

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
 * Terminates TLS on the sockets a listener accepts, with a certificate that can be swapped while
 * it runs: a connection keeps the certificate it was accepted with, a new one gets the current.
 */
export interface TlsTerminator {
  /**
   * Starts the server side of a TLS handshake on `raw` (just accepted, nothing read from it yet).
   * The returned socket emits `secure` once the handshake is done; its `alpnProtocol` is then
   * `"h2"`, `"http/1.1"` or false (the client offered no ALPN: HTTP/1.1). A failed handshake emits
   * `error` and closes the socket.
   */
  wrap(raw: Socket): TLSSocket;
  /**
   * Serves `pair` to connections accepted from now on. Throws (and keeps the current pair) when
   * the pair does not make a secure context (a bad PEM, a key of another certificate).
   */
  reload(pair: TlsPair): void;
}

/**
 * A terminator serving `pair`, TLS 1.2 at least, ALPN `h2` then `http/1.1`. Throws when the pair
 * does not make a secure context. It is node's own `tls.Server` connection setup, minus the
 * listening: the listener keeps accepting raw sockets and decides when each is wrapped.
 */
export function createTlsTerminator(pair: TlsPair): TlsTerminator {
  let context = secureContextOf(pair);
  return {
    wrap(raw) {
      return new TLSSocket(raw, {
        isServer: true,
        secureContext: context,
        ALPNProtocols: [...TLS_ALPN_PROTOCOLS],
        requestCert: false,
      });
    },
    reload(next) {
      context = secureContextOf(next);
    },
  };
}

function secureContextOf(pair: TlsPair): SecureContext {
  return createSecureContext({ cert: pair.cert, key: pair.key, minVersion: TLS_MIN_VERSION });
}
