/**
 * The database records migrations this wharf does not have: a newer wharf migrated it. Nothing was
 * changed. The message is the one line an operator reads (without the `wharf: ` prefix): what was
 * found, the newest migration this build knows, and what to do.
 */
export class SchemaNewerError extends Error {
  override readonly name = "SchemaNewerError";

  /** `unknown`: the applied migrations this build lacks; `newestKnown`: the last one it has. */
  constructor(
    readonly unknown: readonly string[],
    readonly newestKnown: string,
  ) {
    super(
      `the database schema is newer than this wharf (applied: ${unknown.join(", ")}; newest known: ${newestKnown}); upgrade wharf or point it at another database`,
    );
  }
}
