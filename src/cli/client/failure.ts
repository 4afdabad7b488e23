import { Code } from "@connectrpc/connect";
import { isWharfApiError } from "../../sdk/errors.js";
import { CommandExit, EXIT } from "./exit-codes.js";
import { UsageError } from "./output.js";

/**
 * The exit code and the one or two lines a failure prints: the server's message, then its field or
 * precondition violations on one line; never a stack trace. NOT_FOUND exits 4, PERMISSION_DENIED
 * and UNAUTHENTICATED 5, a usage error 2, anything else 1.
 */
export function describeFailure(err: unknown): { code: number; lines: string[] } {
  if (err instanceof CommandExit) return { code: err.code, lines: [] };
  if (err instanceof UsageError) return { code: EXIT.usage, lines: [err.message] };
  if (isWharfApiError(err)) {
    const lines = [`${err.codeName}: ${err.message}`];
    // The server's message often already says what a violation says: print only what it adds.
    const details = [
      ...err.fieldViolations.map((v) => ({
        text: `${v.field}: ${v.description}`,
        description: v.description,
      })),
      ...err.preconditionViolations.map((v) => ({
        text: `${v.type}${v.subject ? ` ${v.subject}` : ""}: ${v.description}`,
        description: v.description,
      })),
    ]
      .filter((d) => !err.message.includes(d.description))
      .map((d) => d.text);
    if (details.length > 0) lines.push(`  ${details.join("; ")}`);
    const code =
      err.code === Code.NotFound
        ? EXIT.notFound
        : err.code === Code.PermissionDenied || err.code === Code.Unauthenticated
          ? EXIT.permissionDenied
          : EXIT.error;
    return { code, lines };
  }
  return { code: EXIT.error, lines: [(err as Error)?.message ?? String(err)] };
}
