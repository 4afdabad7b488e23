// `wharf` command lines run in the test's process through runCli (the one parser bin/wharf.js runs),
// for suites that run many of them: a spawned CLI costs a Node start-up and its module loading each
// time, this costs a parse. Keep a few runs of the shipped bin (runWharf) for start-up, exit codes
// and the built dist/.
import { Writable } from "node:stream";
import { runCli } from "../../src/cli/main.js";
import type { CliRun } from "./wharf-process.js";

/** The variables a CLI run reads from the process's environment (the config, the stored login). */
const CLI_VARIABLE = /^(WHARF_.*|HOME|XDG_CONFIG_HOME|NO_COLOR)$/;

/** A stream collecting what is written to it, as `sink.text`; not a TTY, like a pipe. */
function collector(): Writable & { text: string } {
  const sink = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      sink.text += String(chunk);
      done();
    },
  }) as Writable & { text: string };
  sink.text = "";
  return sink;
}

/**
 * Runs `wharf args…` in this process with `env` as its environment, like runWharf does with a child:
 * the command gets `env`, and for the length of the run process.env's WHARF_* (and HOME,
 * XDG_CONFIG_HOME, NO_COLOR) are exactly those of `env`, for code that reads process.env (the
 * config of `wharf import`, the default config dir). process.env and process.exitCode are restored
 * afterwards. Each run borrows process.env, so runs started together run one after the other.
 */
export function runCliInProcess(args: string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  const run = queue.then(() => runAlone(args, env));
  queue = run.catch(() => {});
  return run;
}

/** The end of the last run started: the next one starts after it. */
let queue: Promise<unknown> = Promise.resolve();

async function runAlone(args: string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  const stdout = collector();
  const stderr = collector();
  const names = new Set(
    [...Object.keys(process.env), ...Object.keys(env)].filter((name) => CLI_VARIABLE.test(name)),
  );
  const saved = new Map([...names].map((name) => [name, process.env[name]]));
  const savedExitCode = process.exitCode;
  const setVariable = (name: string, value: string | undefined) => {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  };
  for (const name of names) setVariable(name, env[name]);
  try {
    const code = await runCli(args, { stdout, stderr, env: { ...env } });
    return { code, stdout: stdout.text, stderr: stderr.text };
  } finally {
    for (const [name, value] of saved) setVariable(name, value);
    process.exitCode = savedExitCode;
  }
}
