import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { createTestDatabase, engineSkipReason, type TestDatabase } from "../support/databases.js";
import {
  type CliRun,
  freeLoopbackPort,
  runWharf,
  serveProcess,
  stopProcess,
  type WharfProcess,
} from "../support/wharf-process.js";

/**
 * `wharf serve` on fixed free ports, announcing the shared public URLs: `apiUrl`/`registryUrl` of
 * the result are where this process really listens (serveProcess reports the public URLs).
 */
async function serveBehindSharedUrls(dataDir: string, databaseUrl: string): Promise<WharfProcess> {
  const [api, registry] = [await freeLoopbackPort(), await freeLoopbackPort()];
  const server = await serveProcess(
    dataDir,
    { WHARF_DATABASE_URL: databaseUrl, WHARF_PUBLIC_URL: PUBLIC_URL, WHARF_REGISTRY_URL: REGISTRY_URL },
    { apiAddr: `127.0.0.1:${api}`, registryAddr: `127.0.0.1:${registry}` },
  );
  return { ...server, apiUrl: `http://127.0.0.1:${api}`, registryUrl: `http://127.0.0.1:${registry}` };
}

// Both servers announce one public URL (as servers sharing a database should); requests go to
// each one's own loopback address.
const PUBLIC_URL = "http://wharf.test";
const REGISTRY_URL = "http://registry.wharf.test";

/** Polls `check` every 100 ms until it returns true; fails with `what` after `ms`. */
async function eventually(what: string, check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Resolves once the wall clock is past `ms`. */
async function waitUntilPast(ms: number): Promise<void> {
  while (Date.now() <= ms) await new Promise((r) => setTimeout(r, Math.max(1, ms - Date.now() + 1)));
}

const skip = engineSkipReason("postgres");

describe("token revocation and key rotation across two servers on one PostgreSQL database", { skip }, () => {
  let db: TestDatabase;
  let databaseUrl: string;
  let dataDir: string;
  let servers: WharfProcess[] = [];

  /**
   * `wharf ARGS… --database-url URL`, in this process through runCli (the parser bin/wharf.js runs):
   * the servers are processes of their own either way, and each spawned CLI cost a Node start-up.
   * `spawned` runs the shipped bin/wharf.js (built dist/) instead.
   */
  const wharfRun = (args: string[], spawned = false): Promise<CliRun> =>
    (spawned ? runWharf : runCliInProcess)([...args, "--database-url", databaseUrl], process.env);
  /** Its stdout, asserting exit 0. */
  const wharf = async (...args: string[]) => {
    const r = await wharfRun(args);
    assert.equal(r.code, 0, `wharf ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  const adminToken = async (audience = "api") =>
    (await wharf("admin", "token", "--ttl", "10m", "--audience", audience)).trim();
  const apiStatus = async (server: WharfProcess, token: string) =>
    (await fetch(`${server.apiUrl}/iam/v2/groups`, { headers: { authorization: `Bearer ${token}` } })).status;
  const registryStatus = async (server: WharfProcess, token: string) =>
    (await fetch(`${server.registryUrl}/v2/`, { headers: { authorization: `Bearer ${token}` } })).status;
  const everywhere = async (status: (s: WharfProcess, t: string) => Promise<number>, token: string) =>
    Promise.all(servers.map((s) => status(s, token)));

  before(async () => {
    db = createTestDatabase("postgres");
    const options = await db.freshOptions();
    databaseUrl = options.databaseUrl ?? "";
    dataDir = await mkdtemp(join(tmpdir(), "wharf-revocation-"));
    servers = [
      await serveBehindSharedUrls(dataDir, databaseUrl),
      await serveBehindSharedUrls(dataDir, databaseUrl),
    ];
  });
  after(async () => {
    await Promise.all(servers.map((s) => stopProcess(s)));
    await db?.dispose();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("--subject: both servers refuse the subject's older tokens within seconds; a newer token works", async () => {
    const token = await adminToken();
    const registryToken = await adminToken("registry");
    assert.deepEqual(await everywhere(apiStatus, token), [200, 200], "accepted by both");
    assert.deepEqual(await everywhere(registryStatus, registryToken), [200, 200], "both registries too");

    // The shipped bin revokes: both servers learn of it through the database.
    const revoked = await wharfRun(["admin", "tokens", "revoke", "--subject", ADMIN_IDENTITY_UID], true);
    assert.equal(revoked.code, 0, revoked.stderr);
    const out = revoked.stdout;
    const cutoff = Date.parse(/issued before (\S+);/.exec(out)?.[1] ?? "");
    assert.ok(cutoff > (decodeJwt(token).iat ?? 0) * 1000, out);
    await eventually("both servers refuse the revoked token", async () => {
      const statuses = await everywhere(apiStatus, token);
      return statuses.every((s) => s === 401);
    });
    assert.deepEqual(await everywhere(registryStatus, registryToken), [401, 401], "registries refuse it too");
    const refused = await fetch(`${servers[0]?.apiUrl}/iam/v2/groups`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.match(((await refused.json()) as { message: string }).message, /token has been revoked/);

    await waitUntilPast(cutoff);
    const fresh = await adminToken();
    assert.deepEqual(await everywhere(apiStatus, fresh), [200, 200], "a token issued afterwards works");
    assert.deepEqual(await everywhere(registryStatus, await adminToken("registry")), [200, 200]);
  });

  it("--issued-before: every token issued before TIME is refused within seconds; later ones work", async () => {
    const before = await adminToken();
    assert.deepEqual(await everywhere(apiStatus, before), [200, 200]);
    const time = (Math.floor(Date.now() / 1000) + 1) * 1000; // the next whole second
    await waitUntilPast(time);
    await wharf("admin", "tokens", "revoke", "--issued-before", new Date(time).toISOString());
    await eventually("both servers refuse the older token", async () =>
      (await everywhere(apiStatus, before)).every((s) => s === 401),
    );
    const after = await adminToken();
    assert.ok((decodeJwt(after).iat ?? 0) * 1000 >= time);
    assert.deepEqual(await everywhere(apiStatus, after), [200, 200]);
  });

  it("refuses bad revocations with one line and exit 2, storing nothing", async () => {
    for (const [args, message] of [
      [[], /give --subject, --issued-before, or both/],
      [["--issued-before", "yesterday"], /--issued-before must be an RFC 3339 time/],
      [["--issued-before", new Date(Date.now() + 3600_000).toISOString()], /must not be in the future/],
    ] as const) {
      const refused = await wharfRun(["admin", "tokens", "revoke", ...args]);
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, message);
      assert.equal(refused.stderr.trim().split("\n").length, 1, refused.stderr);
    }
    const token = await adminToken();
    assert.deepEqual(await everywhere(apiStatus, token), [200, 200], "nothing was revoked");
  });

  it("keys rotate: both servers sign with the new key within seconds; old tokens still verify", async () => {
    const old = await adminToken();
    const oldKid = decodeProtectedHeader(old).kid;
    const newKid = (await wharf("admin", "keys", "rotate")).trim();
    assert.notEqual(newKid, oldKid);
    // Each server re-issues a token through its STS, signed with whatever key it signs with now.
    const reissuedKid = async (server: WharfProcess) => {
      const res = await fetch(`${server.apiUrl}/sts/exchange`, {
        headers: { authorization: `Bearer ${old}` },
      });
      assert.equal(res.status, 200, await res.clone().text());
      return decodeProtectedHeader(((await res.json()) as { token: string }).token).kid;
    };
    await eventually("both servers sign with the new key", async () =>
      (await Promise.all(servers.map(reissuedKid))).every((kid) => kid === newKid),
    );
    for (const server of servers) {
      const jwks = (await (await fetch(`${server.apiUrl}/.well-known/jwks.json`)).json()) as {
        keys: { kid: string }[];
      };
      assert.deepEqual(
        jwks.keys.map((k) => k.kid),
        [newKid, oldKid],
        "both keys published, newest first",
      );
    }
    assert.deepEqual(await everywhere(apiStatus, old), [200, 200], "the old key's tokens still verify");
    const list = await wharf("admin", "keys", "list");
    assert.match(list, /^KID\s+CREATED\s+STATE\s+RETIRES\n/);
    assert.match(list, new RegExp(`^${newKid}\\s+\\S+\\s+current\\s+-$`, "m"));
    assert.match(list, new RegExp(`^${oldKid}\\s+\\S+\\s+retiring\\s+\\d{4}-`, "m"));
  });
});
