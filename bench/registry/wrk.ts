// Runs wrk (HTTP/1.1 keep-alive load generator) and parses its summary.
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface WrkResult {
  rps: number;
  requests: number;
  /** Non-2xx/3xx answers plus socket errors (connect, read, write, timeout). */
  errors: number;
}

/** `wrk -t<threads> -c<connections> -d<seconds>s -H … <url>`. */
export async function wrk(
  url: string,
  opts: { seconds: number; threads?: number; connections?: number; headers?: Record<string, string> },
): Promise<WrkResult> {
  const args = [`-t${opts.threads ?? 2}`, `-c${opts.connections ?? 32}`, `-d${opts.seconds}s`];
  for (const [name, value] of Object.entries(opts.headers ?? {})) args.push("-H", `${name}: ${value}`);
  args.push(url);
  const { stdout } = await run("wrk", args, { maxBuffer: 1 << 20 });
  const rps = /^Requests\/sec:\s+([\d.]+)/m.exec(stdout);
  const requests = /^\s*(\d+) requests in/m.exec(stdout);
  if (!rps || !requests) throw new Error(`cannot parse wrk output:\n${stdout}`);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(stdout);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const errors =
    Number(non2xx?.[1] ?? 0) + (socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0);
  return { rps: Number(rps[1]), requests: Number(requests[1]), errors };
}
