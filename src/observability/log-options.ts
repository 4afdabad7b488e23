// What `--log-level` and `--log-format` take (kept apart from log.ts so that reading the
// configuration does not load the logger).

/** The levels `--log-level` takes, least severe first; `silent` writes nothing. */
export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** `json`: one JSON object per line (the default); `pretty`: pino-pretty's text, for people. */
export const LOG_FORMATS = ["json", "pretty"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
