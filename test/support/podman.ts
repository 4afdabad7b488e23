import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";

/** What a podman run printed, and its exit code (non-zero is returned, not thrown). */
export interface PodmanResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A podman isolated in a folder of its own: `podman(args)` runs it there; `policy` accepts anything. */
export interface PodmanSandbox {
  podman(args: string[]): Promise<PodmanResult>;
  /** A `--signature-policy` file that accepts every image. */
  policy: string;
}

/**
 * Sets up podman in `work` (a test's temp folder) so it reads nothing of the machine's or the
 * user's configuration: its own HOME, storage (`vfs`, as root on these VMs) and run root, empty
 * containers.conf and registries.conf, an empty auth file, file-backed events and cgroupfs.
 */
export async function podmanSandbox(work: string): Promise<PodmanSandbox> {
  const home = join(work, "podman");
  const policy = join(work, "policy.json");
  const empty = join(work, "empty.conf");
  const authFile = join(work, "podman-auth.json");
  await writeFile(policy, JSON.stringify({ default: [{ type: "insecureAcceptAnything" }] }));
  await writeFile(empty, "");
  await writeFile(authFile, "{}\n");
  const env = {
    ...process.env,
    HOME: home,
    TMPDIR: work,
    CONTAINERS_CONF: empty,
    CONTAINERS_REGISTRIES_CONF: empty,
    REGISTRY_AUTH_FILE: authFile,
  };
  const global = [
    ...["--root", join(home, "root"), "--runroot", join(home, "runroot")],
    ...["--storage-driver", "vfs", "--events-backend", "file", "--cgroup-manager", "cgroupfs"],
  ];
  return {
    policy,
    podman: (args) =>
      new Promise((resolve) => {
        execFile("podman", [...global, ...args], { env, timeout: 120_000 }, (err, stdout, stderr) => {
          const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
          resolve({ code, stdout, stderr });
        });
      }),
  };
}
