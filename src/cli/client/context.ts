import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { WharfClient } from "../../sdk/client.js";
import type { FetchFunction } from "../../sdk/http.js";
import { configDir } from "../../sdk/node/stored-credentials.js";
import { storedLogin } from "../../sdk/node/stored-login.js";
import type { ServiceTable } from "../../sdk/service-clients.js";
import { staticToken, type TokenSource } from "../../sdk/token-sources.js";
import { leanClient } from "./lean-client.js";
import { chooseFormat, type OutputFormat, UsageError } from "./output.js";

/** The global flags every client command takes. */
export interface GlobalFlags {
  apiUrl?: string;
  token?: string;
  timeout?: string;
  /** false with `--no-color`. */
  color?: boolean;
  verbose?: boolean;
  output?: string;
}

/** What a command runs with: a client, where to write, and how. */
export interface CommandContext {
  client: WharfClient;
  apiUrl: string;
  /** The token given by flag or environment, if any (else the stored login is used). */
  givenToken: string | undefined;
  tokenSource: TokenSource;
  format: OutputFormat;
  color: boolean;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  /** The fetch of every request (timeout and tracing applied), for registry calls the SDK has no helper for. */
  fetch: FetchFunction;
  /** `--timeout` in milliseconds, when given (a time limit of each request, and of a wait). */
  timeoutMs: number | undefined;
}

/** Where the CLI writes and what it reads. */
export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

/**
 * The API URL: `--api-url`, else WHARF_API_URL, else `apiUrl` of `<config dir>/config.json`, else
 * http://127.0.0.1:8080.
 */
export function resolveApiUrl(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const value = flag || env.WHARF_API_URL || storedApiUrl(env) || "http://127.0.0.1:8080";
  try {
    return new URL(value).origin;
  } catch {
    throw new UsageError(`--api-url must be a URL (got "${value}")`);
  }
}

function storedApiUrl(env: NodeJS.ProcessEnv): string | undefined {
  try {
    const config = JSON.parse(readFileSync(join(configDir(env), "config.json"), "utf8")) as {
      apiUrl?: unknown;
    };
    return typeof config.apiUrl === "string" ? config.apiUrl : undefined;
  } catch {
    return undefined;
  }
}

/** `--timeout` as milliseconds: `30s`, `2m`, `500ms` or plain seconds. */
export function parseTimeout(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value);
  if (!match) throw new UsageError(`--timeout must be a duration like 30s, 2m or 500ms (got "${value}")`);
  const amount = Number(match[1]);
  const unit = match[2] ?? "s";
  return amount * (unit === "ms" ? 1 : unit === "s" ? 1000 : 60_000);
}

/**
 * A fetch with the time limit and, with `-v`, one line per request and answer on stderr: method,
 * URL, status and time. Headers and bodies are never printed (they carry tokens).
 */
export function instrumentedFetch(options: {
  timeoutMs: number | undefined;
  trace: ((line: string) => void) | undefined;
}): FetchFunction {
  return async (input, init) => {
    const signal =
      options.timeoutMs === undefined
        ? init?.signal
        : init?.signal
          ? AbortSignal.any([init.signal, AbortSignal.timeout(options.timeoutMs)])
          : AbortSignal.timeout(options.timeoutMs);
    const method = init?.method ?? (input instanceof Request ? input.method : "GET");
    const url = input instanceof Request ? input.url : String(input);
    const started = performance.now();
    options.trace?.(`> ${method} ${url}`);
    try {
      const response = await globalThis.fetch(input, { ...init, ...(signal ? { signal } : {}) });
      options.trace?.(
        `< ${response.status} ${method} ${url} (${Math.round(performance.now() - started)} ms)`,
      );
      return response;
    } catch (err) {
      options.trace?.(`< failed ${method} ${url}: ${(err as Error).message}`);
      throw err;
    }
  };
}

/** Builds the context of a command from the global flags, with a client of `services` (see leanClient). */
export function commandContext(flags: GlobalFlags, io: Io, services: ServiceTable): CommandContext {
  const apiUrl = resolveApiUrl(flags.apiUrl, io.env);
  const givenToken = flags.token || io.env.WHARF_TOKEN || undefined;
  const color = flags.color !== false && !io.env.NO_COLOR && io.stdout.isTTY === true;
  const timeoutMs = parseTimeout(flags.timeout);
  const fetchFn = instrumentedFetch({
    timeoutMs,
    trace: flags.verbose ? (line) => io.stderr.write(`${line}\n`) : undefined,
  });
  const tokenSource = givenToken
    ? staticToken(givenToken)
    : storedLogin({ apiUrl, env: io.env, fetch: fetchFn });
  return {
    client: leanClient({ apiUrl, services, tokenSource, fetch: fetchFn }),
    apiUrl,
    givenToken,
    tokenSource,
    format: chooseFormat(flags.output, io.stdout.isTTY === true),
    color,
    stdout: io.stdout,
    stderr: io.stderr,
    env: io.env,
    fetch: fetchFn,
    timeoutMs,
  };
}
