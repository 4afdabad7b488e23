/** Something that can be stopped: a store, a blob driver, a listener (with its grace period). */
export interface Closable {
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * What a server started, in the order it must stop: its listeners first, then the things the
 * builders started (`onClose`, the last started first), then its resources (store, blobs). Both
 * ways out take that order; every step waits for all of its parts, whichever fail.
 */
export interface Lifecycle {
  /** A bound listener: closed before anything else stops. */
  listening(...listeners: Closable[]): void;
  /** Something started (a thread, a timer, a buffer): stopped after the listeners, last started first. */
  onClose(close: () => Promise<void>): void;
  /**
   * The normal stop: the listeners close with `graceMs` (default: their own, 5 s) while
   * `alongside` settles (e.g. a garbage collection run finishing), then `listenersClosed` runs,
   * then the `onClose`s, then the resources.
   */
  close(
    alongside?: readonly Promise<unknown>[],
    options?: { graceMs?: number; listenersClosed?: () => void },
  ): Promise<void>;
  /**
   * Start-up failed: the listeners bound so far close at once (`graceMs: 0`, so the process can
   * exit), then the `onClose`s registered so far, then the resources.
   */
  abort(): Promise<void>;
}

/** A {@link Lifecycle} that closes `resources` last (the store and the blob store). */
export function createLifecycle(resources: readonly Closable[]): Lifecycle {
  const listeners: Closable[] = [];
  const closers: (() => Promise<void>)[] = [];
  const stop = async (listenersClosed: Promise<unknown>, then?: () => void): Promise<void> => {
    await listenersClosed;
    then?.();
    await Promise.allSettled(closers.reverse().map((close) => close()));
    await Promise.allSettled(resources.map((resource) => resource.close()));
  };
  return {
    listening: (...bound) => void listeners.push(...bound),
    onClose: (close) => void closers.push(close),
    close: (alongside = [], options = {}) =>
      stop(
        Promise.allSettled([
          ...listeners.map((listener) =>
            listener.close(options.graceMs === undefined ? undefined : { graceMs: options.graceMs }),
          ),
          ...alongside,
        ]),
        options.listenersClosed,
      ),
    abort: () => stop(Promise.allSettled(listeners.map((listener) => listener.close({ graceMs: 0 })))),
  };
}
