// The one log schema of every line Wharf writes (ADR 0041), on pino.
import { pino } from "pino";
import { LOG_LEVELS, type LogFormat, type LogLevel } from "./log-options.js";

export { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from "./log-options.js";

/**
 * Writes one log line. `line` holds `level` (default `info`), `msg`, and any fields; a `time` it
 * holds is replaced by the time of writing. Never throws.
 */
export type LogSink = (line: object) => void;

/** What a redacted value is replaced with. */
export const REDACTED = "[REDACTED]";

/** Field names whose values are never written, at the top level or one level down. */
export const SECRET_FIELDS = [
  "authorization",
  "Authorization",
  "cookie",
  "password",
  "token",
  "accessToken",
  "access_token",
  "refreshToken",
  "refresh_token",
  "idToken",
  "id_token",
  "clientSecret",
  "client_secret",
  "secret",
  "secretAccessKey",
] as const;

const REDACT_PATHS = SECRET_FIELDS.flatMap((name) => [name, `*.${name}`]);

/**
 * Credentials inside text (an error message, a URL): bearer and basic credentials, JSON Web
 * Tokens, and the password of a URL's user-info part.
 */
const SECRET_TEXT =
  /\b(Bearer|Basic)\s+[A-Za-z0-9\-._~+/]+=*|\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*|(\/\/[^/\s:@]*):[^/\s@]+@/g;

/** `text` with every credential {@link SECRET_TEXT} finds replaced by {@link REDACTED}. */
export function redactText(text: string): string {
  SECRET_TEXT.lastIndex = 0;
  if (!SECRET_TEXT.test(text)) return text;
  return text.replace(SECRET_TEXT, (_match, scheme: string | undefined, userInfo: string | undefined) =>
    scheme !== undefined
      ? `${scheme} ${REDACTED}`
      : userInfo !== undefined
        ? `${userInfo}:${REDACTED}@`
        : REDACTED,
  );
}

/** Where lines go: a file descriptor (1 = stdout, the default) or a stream (tests). */
export type LogDestination = number | { write(line: string): unknown };

/** Options of {@link createLogSink}. */
export interface LogSinkOptions {
  level?: LogLevel;
  format?: LogFormat;
  /** Fields every line carries (a `--workers` process's `worker`). */
  fields?: Record<string, unknown>;
  destination?: LogDestination;
}

/**
 * A sink writing the schema of ADR 0041: `{"level":"info","time":"<ISO 8601>", …fields, "msg":…}`
 * (JSON, synchronously, one line each) or pino-pretty's text. Lines below `level` are dropped. A
 * line without `msg` gets its `event` field's value, else "log". Values of {@link SECRET_FIELDS}
 * (top level and one level down) and credentials inside string values (see {@link redactText}) are
 * written as {@link REDACTED}. pino-pretty is loaded only for `pretty`.
 */
export async function createLogSink(options: LogSinkOptions = {}): Promise<LogSink> {
  const level = options.level ?? "info";
  const format = options.format ?? "json";
  const out: { write(line: string): unknown } =
    typeof options.destination === "object"
      ? options.destination
      : pino.destination({ dest: options.destination ?? 1, sync: true });
  // pretty: pino-pretty's formatter, called synchronously on each JSON line (its transport stream
  // would write later, and lose the last lines of a process that exits).
  const destination = format === "pretty" ? await prettyWriter(out) : out;
  const logger = pino(
    {
      level,
      base: options.fields ?? null,
      messageKey: "msg",
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      // Level names, not numbers: the schema's `level` is "info", "error"… (pino-pretty reads numbers).
      ...(format === "json" ? { formatters: { level: (label: string) => ({ level: label }) } } : {}),
    },
    destination as never,
  );
  return (line) => {
    try {
      const { level: asked, msg, time: _time, ...fields } = line as Record<string, unknown>;
      const lineLevel = typeof asked === "string" && isLevel(asked) && asked !== "silent" ? asked : "info";
      if (!logger.isLevelEnabled(lineLevel)) return;
      for (const [key, value] of Object.entries(fields)) {
        if (typeof value === "string") fields[key] = redactText(value);
        else if (typeof value === "object" && value !== null && !Array.isArray(value))
          fields[key] = redactStrings(value);
      }
      const message =
        typeof msg === "string" && msg !== "" ? msg : typeof fields.event === "string" ? fields.event : "log";
      logger[lineLevel](fields, redactText(message));
    } catch {
      // A log line must never break what it reports on.
    }
  };
}

async function prettyWriter(out: { write(line: string): unknown }): Promise<{ write(line: string): void }> {
  const { prettyFactory } = await import("pino-pretty");
  const prettify = prettyFactory({
    colorize: false,
    translateTime: "UTC:yyyy-mm-dd'T'HH:MM:ss.l'Z'",
    ignore: "pid,hostname",
  });
  return { write: (line) => void out.write(prettify(line)) };
}

function isLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

/** A shallow copy of `value` with its string values redacted (an error's message and stack). */
function redactStrings(value: object): object {
  let copy: Record<string, unknown> | undefined;
  for (const [key, inner] of Object.entries(value)) {
    if (typeof inner !== "string") continue;
    const redacted = redactText(inner);
    if (redacted === inner) continue;
    copy ??= { ...value };
    copy[key] = redacted;
  }
  return copy ?? value;
}
