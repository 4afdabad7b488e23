import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { decodeJwt } from "jose";
import { runCliInProcess } from "../support/cli-in-process.js";
import {
  type CliRun,
  runWharf,
  serveProcess,
  stopProcess,
  type WharfProcess,
} from "../support/wharf-process.js";

// The server is a `wharf serve` process; the `wharf admin` commands run in this process through
// runCli (the parser bin/wharf.js runs), another process than the server's all the same. Two run
// the shipped bin/wharf.js (built dist/): the first token, and the key rotation the server picks up.

/** Runs `wharf admin …` in this process; resolves to its exit code, stdout and stderr. */
function adminRun(...args: string[]): Promise<CliRun> {
  return runCliInProcess(["admin", ...args], process.env);
}

/** Runs `wharf admin …` in this process, asserting exit 0; resolves to stdout and stderr. */
async function admin(...args: string[]): Promise<CliRun> {
  const run = await adminRun(...args);
  assert.equal(run.code, 0, `wharf admin ${args.join(" ")}: ${run.stderr}`);
  return run;
}

/** The same through the shipped bin/wharf.js, a child process. */
async function adminSpawned(...args: string[]): Promise<CliRun> {
  const run = await runWharf(["admin", ...args], process.env);
  assert.equal(run.code, 0, `wharf admin ${args.join(" ")}: ${run.stderr}`);
  return run;
}

describe("wharf admin token finds the issuer by itself", () => {
  let dataDir: string;
  let server: WharfProcess;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "wharf-admin-token-"));
    server = await serveProcess(dataDir); // random ports: not the default 127.0.0.1:8080
  });
  after(async () => {
    await stopProcess(server);
    await rm(dataDir, { recursive: true, force: true });
  });

  it("with only --data-dir, signs for the URL the server recorded: the API accepts it", async () => {
    const { stdout, stderr } = await adminSpawned("token", "--data-dir", dataDir);
    const token = stdout.trim();
    assert.equal(stderr, "", "no fallback note: the server recorded its URL");
    assert.equal(decodeJwt(token).iss, server.apiUrl);
    const res = await fetch(`${server.apiUrl}/iam/v2/groups`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(res.status, 200, await res.text());
  });

  it("--audience registry works against the server's registry", async () => {
    const { stdout } = await admin("token", "--data-dir", dataDir, "--audience", "registry");
    const token = stdout.trim();
    assert.equal(decodeJwt(token).aud, server.registryUrl);
    const res = await fetch(`${server.registryUrl}/v2/`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200, await res.text());
  });

  it("--public-url still wins over the recorded URL", async () => {
    const { stdout } = await admin("token", "--data-dir", dataDir, "--public-url", "http://elsewhere.test");
    assert.equal(decodeJwt(stdout.trim()).iss, "http://elsewhere.test");
  });

  it("--ttl is capped at 24h: longer is one line on stderr and exit 2", async () => {
    const { stdout } = await admin("token", "--data-dir", dataDir, "--ttl", "24h");
    const claims = decodeJwt(stdout.trim());
    assert.equal((claims.exp ?? 0) - (claims.iat ?? 0), 86_400);
    for (const ttl of ["25h", "2d", "86401s"]) {
      const refused = await adminRun("token", "--data-dir", dataDir, "--ttl", ttl);
      assert.equal(refused.code, 2);
      assert.equal(refused.stderr, `wharf: --ttl must be at most 24h (got "${ttl}")\n`);
    }
  });

  it("without a recorded URL (no server ever started) it falls back to the default and says so", async () => {
    const empty = await mkdtemp(join(tmpdir(), "wharf-admin-token-empty-"));
    try {
      const { stdout, stderr } = await admin("token", "--data-dir", empty);
      assert.equal(decodeJwt(stdout.trim()).iss, "http://127.0.0.1:8080");
      assert.match(
        stderr,
        /no server has recorded its URL in this database yet: using http:\/\/127\.0\.0\.1:8080/,
      );
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it("admin keys and tokens subcommands answer -h/--help with their usage and exit 0", async () => {
    for (const words of [["token"], ["keys", "rotate"], ["keys", "list"], ["tokens", "revoke"]]) {
      for (const flag of ["-h", "--help"]) {
        const { stdout } = await admin(...words, flag);
        assert.match(stdout, new RegExp(`wharf admin ${words.join(" ")}`), `${words.join(" ")} ${flag}`);
      }
    }
  });

  it("keys rotate and list work on the SQLite data dir while the server runs; the server signs with the new key", async () => {
    const { stdout } = await adminSpawned("keys", "rotate", "--data-dir", dataDir);
    const kid = stdout.trim();
    const list = (await admin("keys", "list", "--data-dir", dataDir)).stdout;
    assert.match(list, new RegExp(`^${kid}\\s+\\S+\\s+current\\s+-$`, "m"));
    assert.match(list, /\sretiring\s/);
    const token = (await admin("token", "--data-dir", dataDir)).stdout.trim();
    const res = await fetch(`${server.apiUrl}/iam/v2/groups`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(res.status, 200, "the server verifies a token of the key rotated in by another process");
  });
});
