import { existsSync } from "node:fs";
import { extname } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The URL of the module at `path` (relative to `base`, written without an extension) with `base`'s
 * own extension: `.js` when the code runs compiled from `dist/`, `.ts` when it runs from `src/` under
 * tsx (tests), which does not map a `.js` entry point to its `.ts` source. For starting a
 * worker thread: `new Worker(moduleUrl("../workers/x", import.meta.url))`. Under tsx the thread
 * inherits the parent's `--import` preloads, and `scripts/tsx-in-workers.mjs` registers tsx there.
 *
 * With `WHARF_TEST_WORKERS_FROM_DIST=1` (set by scripts/run-tests.mjs, which builds `dist/` from
 * `src/` first) a `.ts` module under `src/` resolves to its compiled twin under `dist/` when that
 * exists: a worker thread that loads TypeScript through tsx costs about a second of CPU and a
 * loader thread of its own, per thread, per server a test starts (ADR 0033).
 */
export function moduleUrl(path: string, base: string): URL {
  const url = new URL(`${path}${extname(new URL(base).pathname)}`, base);
  if (process.env.WHARF_TEST_WORKERS_FROM_DIST !== "1" || !url.pathname.endsWith(".ts")) return url;
  const at = url.pathname.lastIndexOf("/src/");
  if (at < 0) return url;
  const compiled = new URL(url);
  compiled.pathname = `${url.pathname.slice(0, at)}/dist/${url.pathname.slice(at + 5, -3)}.js`;
  return existsSync(fileURLToPath(compiled)) ? compiled : url;
}

/** Options that shape how a thread loads modules: the ones an explicit worker `execArgv` keeps. */
const MODULE_OPTIONS = new Set(["--import", "--require", "-r", "--conditions", "-C"]);

/**
 * The `execArgv` for a worker thread running `entry`: undefined (inherit the parent's) for a
 * TypeScript entry, and when the parent runs no tsx. For a JavaScript entry under tsx, the parent's
 * module-loading options (`--import`, `--require`, `--conditions`) without tsx's: an explicit
 * `execArgv` must leave out per-process flags such as `--initial-old-space-size` (which
 * `wharf serve`'s shebang and the benches set), as Node refuses them in a worker; V8 flags apply
 * to the whole process anyway.
 */
export function workerExecArgv(entry: URL): string[] | undefined {
  if (!entry.pathname.endsWith(".js")) return undefined;
  const args = process.execArgv;
  if (!args.some((arg) => /tsx/.test(arg))) return undefined;
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const [name, inlineValue] = arg.split(/=(.*)/s, 2) as [string, string | undefined];
    if (!MODULE_OPTIONS.has(name)) continue;
    const value = inlineValue ?? args[++i];
    if (value === undefined || /tsx/.test(value)) continue;
    kept.push(`${name}=${value}`);
  }
  return kept;
}
