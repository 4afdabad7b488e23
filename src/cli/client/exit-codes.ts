// Kept free of imports: the exit codes are needed on every run, the failure decoding
// (failure.ts, which loads Connect and the SDK's errors) only when a command fails.

/** Exit codes of the client commands. */
export const EXIT = { ok: 0, error: 1, usage: 2, notFound: 4, permissionDenied: 5 } as const;

/**
 * Ends a command line with `code` after the command printed its own failure (the server-side
 * commands and the importers say what went wrong themselves): nothing more is printed.
 */
export class CommandExit extends Error {
  readonly code: number;

  constructor(code: number) {
    super(`exit ${code}`);
    this.name = "CommandExit";
    this.code = code;
  }
}
