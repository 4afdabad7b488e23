/** Where a command that opens the store prints its result (stdout) and its notes and progress (stderr). */
export interface CommandOutput {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}
