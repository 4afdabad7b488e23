/**
 * A port bound before its handler exists. The composition root binds every port first, so the
 * public URLs that depend on the bound ports (port 0 in tests) are plain values by the time
 * anything is built, then hands each listener its handler with `serve`.
 *
 * Until `serve` is called, every request is answered at once with **503** (`Retry-After: 1`) and a
 * body in the face's own error format saying the server is starting; nothing is held, so a
 * start-up that fails or takes long never leaves a client waiting (a request body is left unread,
 * and node discards it).
 */
export interface BoundListener<Handler> {
  /** The bound address; `port` is the real one when 0 was requested. Known before `serve`. */
  readonly address: { host: string; port: number };
  /** Starts answering requests with `handler`. Once only: a second call throws. */
  serve(handler: Handler): void;
  /**
   * Stops accepting, lets in-flight requests finish (up to `graceMs`, default 5 s), then closes
   * every connection. Safe before `serve` (the start-up failure path closes with `graceMs: 0`).
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/** What a bound listener answers before `serve`: the face's error message, in every format. */
export const NOT_SERVING_YET = "the server is starting; retry shortly";

/** Seconds a client is asked to wait (`Retry-After`) when it asked before `serve`. */
export const NOT_SERVING_RETRY_AFTER_SECONDS = 1;
