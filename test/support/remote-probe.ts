/**
 * Runs one remote-client call in a child process and prints its outcome as one JSON line:
 * `{"ok": true, "bytes": n}` or `{"kind", "message"}`. For tests that need the client to trust a
 * throwaway CA: Node reads NODE_EXTRA_CA_CERTS only at start, so such a client runs in a child
 * started with it (see probeRemote).
 *
 * argv[2]: JSON `{url, allowHttp, repo, digest}`; the policy allows loopback.
 */
import { execFile } from "node:child_process";
import { systemClock } from "../../src/core/clock.js";
import { createSinkAddressPolicy } from "../../src/events/sink-address-policy.js";
import { createRemoteRegistry } from "../../src/registry/remote/remote-client.js";
import { RemoteError } from "../../src/registry/remote/remote-registry.js";

/** What the child printed. */
export type ProbeOutcome = { ok: true; bytes: number } | { kind: string; message: string };

/** Fetches blob `digest` of `repo` at `url` in a child trusting `caFile`. */
export function probeRemote(
  caFile: string,
  args: { url: string; allowHttp: boolean; repo: string; digest: string },
): Promise<ProbeOutcome> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", "tsx", new URL(import.meta.url).pathname, JSON.stringify(args)],
      {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: caFile },
        // tsx resolves from the checkout, whatever the test process's directory.
        cwd: new URL("../..", import.meta.url).pathname,
        timeout: 60_000,
      },
      (err, stdout, stderr) => {
        const line = stdout.trim().split("\n").at(-1) ?? "";
        try {
          resolve(JSON.parse(line) as ProbeOutcome);
        } catch {
          reject(new Error(`probe failed (${err?.message ?? "no JSON"}): ${stderr}`));
        }
      },
    );
  });
}

async function main(raw: string): Promise<void> {
  const args = JSON.parse(raw) as { url: string; allowHttp: boolean; repo: string; digest: string };
  const remote = createRemoteRegistry({
    url: args.url,
    allowHttp: args.allowHttp,
    policy: createSinkAddressPolicy({ allow: [], allowLoopback: true }),
    clock: systemClock,
    timeoutMs: 5000,
  });
  try {
    const blob = await remote.getBlob(args.repo, args.digest);
    let bytes = 0;
    for await (const chunk of blob.body) bytes += (chunk as Buffer).length;
    process.stdout.write(`${JSON.stringify({ ok: true, bytes })}\n`);
  } catch (err) {
    const kind = err instanceof RemoteError ? err.kind : `not a RemoteError: ${String(err)}`;
    process.stdout.write(`${JSON.stringify({ kind, message: (err as Error).message })}\n`);
  } finally {
    await remote.close();
  }
}

const arg = process.argv[2];
if (arg !== undefined && process.argv[1] === new URL(import.meta.url).pathname) await main(arg);
