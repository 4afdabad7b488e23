// How a benchmark's child process (Wharf, the bare server, the webhook receiver) learns to stop.

/**
 * Calls `stop` on SIGTERM or SIGINT, or when stdin closes: the parent spawns children with a stdin
 * pipe, so its death, however it dies, ends their stdin too.
 */
export function stopWhenAsked(stop: () => void): void {
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  process.stdin.on("end", stop);
  process.stdin.resume();
}
