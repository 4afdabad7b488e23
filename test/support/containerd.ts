/**
 * A containerd of a test's own (Debian's `containerd`): its own root, state, sockets and
 * `config.toml`, the CRI plugin off, driven with `ctr --address <its socket>`.
 *
 * ```ts
 * const containerd = await startContainerd(work);
 * if ("skip" in containerd) return t.skip(containerd.skip);
 * await containerd.ctr(["images", "pull", "--hosts-dir", hostsDir, "docker.io/library/app:1"]);
 * ```
 *
 * `ctr` resolves and fetches in its own process (the mirrors of `--hosts-dir` are read there); the
 * daemon stores the content and unpacks it into the `native` snapshotter (no overlay needed).
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type CommandResult, type Daemon, runCommand, spawnDaemon, waitForDaemon } from "./daemon-process.js";
import { commandAvailable } from "./skopeo.js";

/** node:test `skip` value: `false` when containerd and ctr are installed, else the reason. */
export const containerdSkip: false | string =
  commandAvailable("containerd") && commandAvailable("ctr")
    ? false
    : "containerd not installed: apt-get install containerd";

/** A running test containerd and its client. */
export interface ContainerdDaemon {
  /** The gRPC socket (`ctr --address`). */
  address: string;
  /** Runs `ctr --address <address> <args>` (namespace `default`). */
  ctr(args: string[]): Promise<CommandResult>;
  daemon: Daemon;
  stop(): Promise<void>;
}

/**
 * Writes the `hosts.toml` of `host` under `hostsDir` (`<hostsDir>/<host>/hosts.toml`): pull and
 * resolve through `mirror` (an `http://` URL is used in plain HTTP), `server` as the fallback.
 * Returns the file's text (the guide quotes it).
 */
export async function writeHostsToml(
  hostsDir: string,
  host: string,
  mirror: string,
  server = host === "docker.io" ? "https://registry-1.docker.io" : `https://${host}`,
): Promise<string> {
  const text = [
    `server = "${server}"`,
    "",
    `[host."${mirror}"]`,
    `  capabilities = ["pull", "resolve"]`,
    "",
  ].join("\n");
  await mkdir(join(hostsDir, host), { recursive: true });
  await writeFile(join(hostsDir, host, "hosts.toml"), text);
  return text;
}

/**
 * Starts `containerd` under `dir` and waits until `ctr version` reaches it. Returns `{ skip }` with
 * the reason (and the log tail) when it is not installed or cannot start here.
 */
export async function startContainerd(dir: string): Promise<ContainerdDaemon | { skip: string }> {
  if (containerdSkip) return { skip: containerdSkip };
  await mkdir(dir, { recursive: true });
  const address = join(dir, "containerd.sock");
  const config = join(dir, "config.toml");
  await writeFile(
    config,
    [
      "version = 2",
      `root = "${join(dir, "root")}"`,
      `state = "${join(dir, "state")}"`,
      `disabled_plugins = ["io.containerd.grpc.v1.cri"]`,
      "[grpc]",
      `  address = "${address}"`,
      "[ttrpc]",
      `  address = "${address}.ttrpc"`,
      "[debug]",
      `  address = "${join(dir, "debug.sock")}"`,
      "",
    ].join("\n"),
  );
  const daemon = spawnDaemon(
    existsSync("/usr/bin/containerd") ? "/usr/bin/containerd" : "containerd",
    ["--config", config],
    join(dir, "containerd.log"),
  );
  const ctr = (args: string[]) => runCommand("ctr", ["--address", address, ...args]);
  try {
    await waitForDaemon(
      daemon,
      "containerd",
      async () => existsSync(address) && (await ctr(["version"])).code === 0,
    );
  } catch (err) {
    await daemon.stop(5000);
    return { skip: `containerd cannot run here: ${(err as Error).message}` };
  }
  return { address, ctr, daemon, stop: () => daemon.stop() };
}
