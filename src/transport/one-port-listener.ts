import http from "node:http";
import http2 from "node:http2";
import net, { type AddressInfo } from "node:net";
import type { TlsTerminator } from "./tls-terminator.js";

/** A request listener that accepts both HTTP/1.1 and HTTP/2 (compat API) requests. */
export type DualRequestListener = (
  req: http.IncomingMessage | http2.Http2ServerRequest,
  res: http.ServerResponse | http2.Http2ServerResponse,
) => void;

/** Options of {@link listenOnePort}. */
export interface OnePortListenerOptions {
  /** Interface to bind; default `127.0.0.1`. */
  host?: string;
  /** TCP port; 0 picks a free one (read it back from `address`). */
  port: number;
  handler: DualRequestListener;
  /** A connection that sends nothing for this long is dropped before reaching either server. Default 30 s. */
  sniffTimeoutMs?: number;
  /** HTTP/1.1 keep-alive idle timeout. Default 5 s. */
  keepAliveTimeoutMs?: number;
  /**
   * Offered every HTTP/2 stream before node builds its compatibility request and response for
   * `handler`; returning true takes the stream (the direct unary gRPC path answers on the raw stream
   * API, which costs less per call than the compatibility objects).
   */
  onStream?: HttpStreamHandler;
  /**
   * Serve TLS instead of cleartext: every connection is a TLS handshake (within `sniffTimeoutMs`),
   * then ALPN picks the server (`h2` → HTTP/2, anything else → HTTP/1.1). Nothing is served in
   * cleartext on the port then.
   */
  tls?: TlsTerminator;
  /** HTTP/1.1 time limit for receiving a whole request (node's `requestTimeout`). Default node's (300 s); 0 = none. */
  requestTimeoutMs?: number;
  /**
   * HTTP/2 receive windows in bytes: `stream` is advertised per stream (SETTINGS_INITIAL_WINDOW_SIZE),
   * `session` for the whole connection. Default HTTP/2's 65,535 bytes each, which caps an upload
   * at 64 KiB per round trip; a server taking large request bodies raises them.
   */
  http2Windows?: { stream: number; session: number };
}

/** Takes an HTTP/2 stream (returns true) or leaves it to the request handler (returns false). */
export type HttpStreamHandler = (
  stream: http2.ServerHttp2Stream,
  headers: http2.IncomingHttpHeaders,
) => boolean;

/** Options of {@link OnePortListener.close}. */
export interface CloseOptions {
  /**
   * How long in-flight requests may take to finish before their connections are destroyed.
   * Idle keep-alive sockets and idle HTTP/2 sessions are closed at once. Default 5 s.
   */
  graceMs?: number;
}

/** A bound port serving HTTP/1.1 and HTTP/2 (h2c with prior knowledge, or h2 by ALPN over TLS) with one handler. */
export interface OnePortListener {
  /** The bound address; `port` is the real port when 0 was requested. */
  readonly address: AddressInfo;
  /** The HTTP/1.1 server the sniffer hands connections to (never listening itself). */
  readonly http1: http.Server;
  /** The HTTP/2 server the sniffer hands connections to (never listening itself). */
  readonly http2: http2.Http2Server;
  /**
   * Stops accepting connections, lets in-flight requests finish for up to `graceMs`, then destroys
   * every remaining socket and session. Resolves when all are gone; safe to call more than once.
   */
  close(options?: CloseOptions): Promise<void>;
}

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/**
 * Binds one TCP port and routes each connection by its first bytes: the HTTP/2 connection preface
 * goes to a `node:http2` server (h2c with prior knowledge), anything else to a `node:http` server.
 * The sniffed bytes are unshifted back into the socket, which is never resumed before the chosen
 * server takes it over (an HTTP/2 session reads the socket itself and would miss flowing data).
 * With `tls`, each connection is a TLS handshake instead and ALPN chooses (see
 * {@link OnePortListenerOptions.tls}); both servers then see the decrypted TLS socket.
 * Resolves once listening; rejects when the port cannot be bound.
 */
export async function listenOnePort(options: OnePortListenerOptions): Promise<OnePortListener> {
  const sniffTimeoutMs = options.sniffTimeoutMs ?? 30_000;
  const http1Server = http.createServer(options.handler as http.RequestListener);
  http1Server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 5_000;
  if (options.requestTimeoutMs !== undefined) http1Server.requestTimeout = options.requestTimeoutMs;
  const windows = options.http2Windows;
  const http2Server = http2.createServer(
    windows ? { settings: { initialWindowSize: windows.stream } } : {},
    options.handler as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void,
  );

  const onStream = options.onStream;
  // node registers its compatibility layer (which emits "request" to `handler`) as the one "stream"
  // listener; run it only for the streams `onStream` leaves. Should a node version do otherwise,
  // every stream stays with `handler` (slower, never answered twice).
  const compat = http2Server.listeners("stream") as ((...args: unknown[]) => void)[];
  if (onStream && compat.length === 1) {
    http2Server.removeAllListeners("stream");
    http2Server.on(
      "stream",
      (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, ...rest) => {
        if (onStream(stream, headers)) return;
        for (const listener of compat) listener.call(http2Server, stream, headers, ...rest);
      },
    );
  }

  const sniffing = new Set<net.Socket>();
  const http1Sockets = new Map<net.Socket, { active: number }>();
  const sessions = new Set<http2.ServerHttp2Session>();
  let closing = false;

  http1Server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const state = http1Sockets.get(req.socket);
    if (!state) return;
    state.active++;
    res.once("close", () => {
      state.active--;
      if (closing && state.active === 0) req.socket.destroy();
    });
  });
  http2Server.on("session", (session: http2.ServerHttp2Session) => {
    sessions.add(session);
    if (windows) session.setLocalWindowSize(windows.session);
    session.once("close", () => sessions.delete(session));
    if (closing) session.close();
  });
  // A broken client must not take the process down; the session is torn down by node itself.
  http2Server.on("sessionError", () => {});

  const handOver = (socket: net.Socket, isHttp2: boolean): void => {
    sniffing.delete(socket);
    socket.setTimeout(0);
    if (isHttp2) {
      http2Server.emit("connection", socket);
      return;
    }
    http1Sockets.set(socket, { active: 0 });
    socket.once("close", () => http1Sockets.delete(socket));
    http1Server.emit("connection", socket);
  };

  // With TLS, an accepted socket stays among those being sniffed through its handshake; once
  // secure, the TLS socket is handed over by ALPN (the raw socket under it is found by its peer).
  const acceptTls = options.tls?.terminate((secure) => {
    for (const raw of sniffing)
      if (raw.remotePort === secure.remotePort && raw.remoteAddress === secure.remoteAddress)
        sniffing.delete(raw);
    if (closing) {
      secure.destroy();
      return;
    }
    secure.on("error", () => {});
    handOver(secure, secure.alpnProtocol === "h2");
  }, sniffTimeoutMs);

  // node:http disables Nagle on the sockets it accepts; these are accepted here, so do it here.
  // Without it, small HTTP/2 frames wait for delayed ACKs (~40 ms per exchange).
  const netServer = net.createServer({ noDelay: true }, (socket) => {
    if (closing) {
      socket.destroy();
      return;
    }
    sniffing.add(socket);
    socket.on("error", () => {});
    socket.once("close", () => sniffing.delete(socket));
    if (acceptTls) {
      acceptTls(socket);
      return;
    }
    socket.setTimeout(sniffTimeoutMs, () => socket.destroy());
    let seen: Buffer = Buffer.alloc(0);
    const onReadable = (): void => {
      let chunk: Buffer | null = socket.read() as Buffer | null;
      while (chunk !== null) {
        seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
        chunk = socket.read() as Buffer | null;
      }
      const decided = decide(seen);
      if (decided === undefined) return;
      socket.off("readable", onReadable);
      if (seen.length > 0) socket.unshift(seen);
      handOver(socket, decided);
    };
    socket.on("readable", onReadable);
  });

  await new Promise<void>((resolve, reject) => {
    netServer.once("error", reject);
    netServer.listen(options.port, options.host ?? "127.0.0.1", () => {
      netServer.off("error", reject);
      resolve();
    });
  });
  const address = netServer.address() as AddressInfo;

  let closed: Promise<void> | undefined;
  const close = (closeOptions: CloseOptions = {}): Promise<void> => {
    closed ??= shutdown(closeOptions.graceMs ?? 5_000);
    return closed;
  };

  const shutdown = async (graceMs: number): Promise<void> => {
    closing = true;
    const listenerClosed = new Promise<void>((resolve) => netServer.close(() => resolve()));
    for (const socket of sniffing) socket.destroy();
    for (const [socket, state] of http1Sockets) if (state.active === 0) socket.destroy();
    for (const session of sessions) session.close();
    const deadline = setTimeout(() => {
      for (const socket of http1Sockets.keys()) socket.destroy();
      for (const session of sessions) session.destroy();
    }, graceMs);
    deadline.unref();
    while (http1Sockets.size > 0 || sessions.size > 0) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    clearTimeout(deadline);
    // Neither server listens, but close() also stops their internal timers.
    http1Server.close(() => {});
    http2Server.close(() => {});
    await listenerClosed;
  };

  return { address, http1: http1Server, http2: http2Server, close };
}

/** true = HTTP/2 preface, false = something else, undefined = too few bytes to tell. */
function decide(seen: Buffer): boolean | undefined {
  const n = Math.min(seen.length, PREFACE.length);
  for (let i = 0; i < n; i++) if (seen[i] !== PREFACE[i]) return false;
  return n === PREFACE.length ? true : undefined;
}
