/**
 * A Docker daemon of a test's own (Debian's `docker.io`): `dockerd` with its own data root, exec
 * root, pid file, socket and `daemon.json`, vfs storage and no networking, so that several tests
 * (and engineers) can run one side by side without touching the machine's Docker.
 *
 * ```ts
 * const docker = await startDocker(work, { "registry-mirrors": [wharfUrl], "insecure-registries": [host] });
 * if ("skip" in docker) return t.skip(docker.skip);
 * const pulled = await docker.docker(["pull", "demo/app:1"]);
 * await docker.stop();
 * ```
 *
 * The client is `/usr/bin/docker` (Debian's, the daemon's own version) when present, else the one on
 * PATH (API negotiation copes with a newer one); it runs with `DOCKER_HOST` at the test's socket and
 * `DOCKER_CONFIG` in the test's folder (`configDir`), where a test writes `config.json`.
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type CommandResult,
  type Daemon,
  getOverSocket,
  runCommand,
  spawnDaemon,
  waitForDaemon,
} from "./daemon-process.js";
import { commandAvailable } from "./skopeo.js";

/** node:test `skip` value: `false` when dockerd and a docker client are installed, else the reason. */
export const dockerSkip: false | string =
  commandAvailable("dockerd") || existsSync("/usr/sbin/dockerd")
    ? commandAvailable("docker")
      ? false
      : "no docker client: apt-get install docker.io"
    : "dockerd not installed: apt-get install docker.io";

/** A running test daemon and its client. */
export interface DockerDaemon {
  /** `unix://<dir>/docker.sock`. */
  host: string;
  /** The client's config folder (`DOCKER_CONFIG`): write `config.json` here for credentials. */
  configDir: string;
  /** The `daemon.json` the daemon was started with. */
  daemonJson: string;
  /** Runs the docker client against this daemon. */
  docker(args: string[]): Promise<CommandResult>;
  daemon: Daemon;
  /** Stops the daemon (SIGTERM, then SIGKILL) and waits for it. */
  stop(): Promise<void>;
}

const dockerClient = () => (existsSync("/usr/bin/docker") ? "/usr/bin/docker" : "docker");

/**
 * Starts `dockerd` under `dir` with `daemonConfig` as its `daemon.json` (written to
 * `<dir>/daemon.json`) and waits until its API answers `/_ping`. Returns `{ skip }` with the reason
 * (and the daemon's log tail) when it is not installed or cannot start here.
 */
export async function startDocker(
  dir: string,
  daemonConfig: Record<string, unknown>,
): Promise<DockerDaemon | { skip: string }> {
  if (dockerSkip) return { skip: dockerSkip };
  await mkdir(dir, { recursive: true });
  const configDir = join(dir, "client");
  await mkdir(configDir, { recursive: true });
  await writeFile(join(configDir, "config.json"), "{}\n");
  const daemonJson = join(dir, "daemon.json");
  await writeFile(daemonJson, `${JSON.stringify(daemonConfig, null, 2)}\n`);
  const socket = join(dir, "docker.sock");
  const host = `unix://${socket}`;
  const daemon = spawnDaemon(
    existsSync("/usr/sbin/dockerd") ? "/usr/sbin/dockerd" : "dockerd",
    [
      ...["--data-root", join(dir, "data"), "--exec-root", join(dir, "exec")],
      ...["--pidfile", join(dir, "docker.pid"), "-H", host, "--config-file", daemonJson],
      ...["--storage-driver", "vfs", "--bridge=none", "--iptables=false"],
    ],
    join(dir, "dockerd.log"),
  );
  try {
    await waitForDaemon(
      daemon,
      "dockerd",
      async () => (await getOverSocket(socket, "/_ping"))?.body === "OK",
    );
  } catch (err) {
    await daemon.stop(5000);
    return { skip: `dockerd cannot run here: ${(err as Error).message}` };
  }
  return {
    host,
    configDir,
    daemonJson,
    daemon,
    docker: (args) => runCommand(dockerClient(), args, { DOCKER_HOST: host, DOCKER_CONFIG: configDir }),
    stop: () => daemon.stop(),
  };
}
